import { useMutation, useQueryClient } from '@tanstack/react-query';

import { api, unwrap } from '@/lib/api-client';

/** Unwire both ends (the links stay) and delete the cable. */
export function deleteCable(cableId: number) {
  return unwrap(api.DELETE('/api/v1/cables/{cable_id}', { params: { path: { cable_id: cableId } } }));
}

export function useDeleteCable() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: deleteCable,
    onSettled: async () => {
      await queryClient.invalidateQueries({ queryKey: ['cables'] });
      await queryClient.invalidateQueries({ queryKey: ['links'] });
      await queryClient.invalidateQueries({ queryKey: ['topology'] });
    },
  });
}
