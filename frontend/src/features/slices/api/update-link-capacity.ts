import { useMutation, useQueryClient } from '@tanstack/react-query';

import { api, unwrap } from '@/lib/api-client';

/** The capacity fix of an admission rejection: raise one link's capacity. */
export function updateLinkCapacity(linkId: number, capacityBps: number) {
  return unwrap(
    api.PATCH('/api/v1/links/{link_id}', {
      params: { path: { link_id: linkId } },
      body: { capacity_bps: capacityBps },
    }),
  );
}

export function useUpdateLinkCapacity() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ linkId, capacityBps }: { linkId: number; capacityBps: number }) =>
      updateLinkCapacity(linkId, capacityBps),
    onSettled: async () => {
      await queryClient.invalidateQueries({ queryKey: ['links'] });
      await queryClient.invalidateQueries({ queryKey: ['slices'] });
    },
  });
}
