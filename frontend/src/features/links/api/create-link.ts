import { useMutation, useQueryClient } from '@tanstack/react-query';

import type { LinkCreate } from '@/lib/api/schema';
import { api, unwrap } from '@/lib/api-client';

export function createLink(body: LinkCreate) {
  return unwrap(api.POST('/api/v1/links', { body }));
}

export function useCreateLink() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: createLink,
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['links'] }),
  });
}
