import { useMutation, useQueryClient } from '@tanstack/react-query';

import { api, unwrap } from '@/lib/api-client';

/** Delete a link no slice crosses (409 otherwise). */
export function deleteLink(linkId: number) {
  return unwrap(api.DELETE('/api/v1/links/{link_id}', { params: { path: { link_id: linkId } } }));
}

export function useDeleteLink() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: deleteLink,
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['links'] }),
  });
}
