import { useMutation, useQueryClient } from '@tanstack/react-query';

import type { LinkUpdate } from '@/lib/api/schema';
import { api, unwrap } from '@/lib/api-client';

/** Change a link; 409 admission-rejected when its slices would no longer fit. */
export function updateLink(linkId: number, body: LinkUpdate) {
  return unwrap(api.PATCH('/api/v1/links/{link_id}', { params: { path: { link_id: linkId } }, body }));
}

export function useUpdateLink() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ linkId, body }: { linkId: number; body: LinkUpdate }) => updateLink(linkId, body),
    onSettled: async () => {
      await queryClient.invalidateQueries({ queryKey: ['links'] });
      await queryClient.invalidateQueries({ queryKey: ['slices'] });
    },
  });
}
