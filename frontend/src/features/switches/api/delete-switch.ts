import { useMutation, useQueryClient } from '@tanstack/react-query';

import { api, unwrap } from '@/lib/api-client';

/** Delete a switch without links (409 otherwise). */
export function deleteSwitch(switchId: number) {
  return unwrap(
    api.DELETE('/api/v1/switches/{switch_id}', { params: { path: { switch_id: switchId } } }),
  );
}

export function useDeleteSwitch() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: deleteSwitch,
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['switches'] }),
  });
}
