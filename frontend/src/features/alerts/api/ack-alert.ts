import { useMutation, useQueryClient } from '@tanstack/react-query';

import { requestJson } from '@/lib/api-client';

import type { Alert } from './get-alerts';

/** Acknowledge an alert (see get-alerts.ts for the interface). */
export function ackAlert(alertId: number) {
  return requestJson<Alert>(`/api/v1/alerts/${alertId}/ack`, { method: 'POST' });
}

export function useAckAlert() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ackAlert,
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['alerts'] }),
  });
}
