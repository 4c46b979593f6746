/**
 * Deploy and reconcile-now: each queues a task for the control-plane workers (202 with the
 * task id; 503 when the task queue is down, shown as the operation's error).
 *
 * - `POST /api/v1/switches/{id}/deploy`     push the pipeline (unless the switch has it), then
 *                                            reconcile the entries
 * - `POST /api/v1/switches/{id}/reconcile`  write what the switch lacks, remove what it should
 *                                            not hold
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';

import { api, unwrap } from '@/lib/api-client';

export type SwitchOperation = 'deploy' | 'reconcile';

export function runSwitchOperation(switchId: number, operation: SwitchOperation) {
  const params = { params: { path: { switch_id: switchId } } };
  return operation === 'deploy'
    ? unwrap(api.POST('/api/v1/switches/{switch_id}/deploy', params))
    : unwrap(api.POST('/api/v1/switches/{switch_id}/reconcile', params));
}

export function useSwitchOperation(operation: SwitchOperation) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (switchId: number) => runSwitchOperation(switchId, operation),
    onSettled: async () => {
      await queryClient.invalidateQueries({ queryKey: ['switches'] });
      await queryClient.invalidateQueries({ queryKey: ['slices'] });
    },
  });
}
