import { useMutation, useQueryClient } from '@tanstack/react-query';

import { api, unwrap } from '@/lib/api-client';

import { ALERTS_QUERY_KEY } from './get-alerts';

/** Acknowledge an alert, firing or resolved (operator; acknowledging again changes nothing). */
export function ackAlert(alertId: number) {
  return unwrap(api.POST('/api/v1/alerts/{alert_id}/ack', { params: { path: { alert_id: alertId } } }));
}

export function useAckAlert() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ackAlert,
    onSettled: () => queryClient.invalidateQueries({ queryKey: ALERTS_QUERY_KEY }),
  });
}
