import { useMutation, useQueryClient } from '@tanstack/react-query';

import type { SwitchUpdate } from '@/lib/api/schema';
import { api, unwrap } from '@/lib/api-client';

export function updateSwitch(switchId: number, body: SwitchUpdate) {
  return unwrap(
    api.PATCH('/api/v1/switches/{switch_id}', { params: { path: { switch_id: switchId } }, body }),
  );
}

export function useUpdateSwitch() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ switchId, body }: { switchId: number; body: SwitchUpdate }) => updateSwitch(switchId, body),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['switches'] }),
  });
}
