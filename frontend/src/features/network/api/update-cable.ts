import { useMutation, useQueryClient } from '@tanstack/react-query';

import type { CableUpdate } from '@/lib/api/schema';
import { api, unwrap } from '@/lib/api-client';

export function updateCable(cableId: number, body: CableUpdate) {
  return unwrap(api.PATCH('/api/v1/cables/{cable_id}', { params: { path: { cable_id: cableId } }, body }));
}

export function useUpdateCable() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ cableId, body }: { cableId: number; body: CableUpdate }) => updateCable(cableId, body),
    onSettled: async () => {
      await queryClient.invalidateQueries({ queryKey: ['cables'] });
      await queryClient.invalidateQueries({ queryKey: ['topology'] });
    },
  });
}
