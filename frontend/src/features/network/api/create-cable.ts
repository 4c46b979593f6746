import { useMutation, useQueryClient } from '@tanstack/react-query';

import type { CableCreate } from '@/lib/api/schema';
import { api, unwrap } from '@/lib/api-client';

/** Join two links of two switches; 409 when an end is already a cable's or faces hosts. */
export function createCable(body: CableCreate) {
  return unwrap(api.POST('/api/v1/cables', { body }));
}

export function useCreateCable() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: createCable,
    onSettled: async () => {
      await queryClient.invalidateQueries({ queryKey: ['cables'] });
      await queryClient.invalidateQueries({ queryKey: ['links'] });
      await queryClient.invalidateQueries({ queryKey: ['topology'] });
    },
  });
}
