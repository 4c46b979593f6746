import { useMutation, useQueryClient } from '@tanstack/react-query';

import type { SwitchCreate } from '@/lib/api/schema';
import { api, unwrap } from '@/lib/api-client';

export function createSwitch(body: SwitchCreate) {
  return unwrap(api.POST('/api/v1/switches', { body }));
}

export function useCreateSwitch() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: createSwitch,
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['switches'] }),
  });
}
