/**
 * SLA alerts: `GET /api/v1/alerts?state=&slice_id=&rule=` (viewer, newest first), typed from
 * the generated client. See docs/telemetry.md for the rules.
 */
import { queryOptions, useQuery } from '@tanstack/react-query';

import type { AlertPublic, AlertState, Rule } from '@/lib/api/schema';
import { api, unwrap } from '@/lib/api-client';

export type { AlertState, Rule };
export type Alert = AlertPublic;

export interface AlertFilters {
  state?: AlertState;
  slice_id?: number;
  rule?: Rule;
}

/** What each rule watches, in words. */
export const RULE_LABELS: Record<Rule, string> = {
  delay: 'delay above target',
  throughput: 'throughput below minimum',
  loss: 'loss above maximum',
  marks: 'ECN marks above maximum',
  delay_bound: 'delay above the analytical bound',
};

/** Up to 1000 alerts (the API's page limit), newest first, and their count. */
export function getAlerts(filters: AlertFilters = {}, signal?: AbortSignal) {
  return unwrap(api.GET('/api/v1/alerts', { params: { query: { ...filters, limit: 1000 } }, signal }));
}

/** The prefix of every alerts query: invalidated by the alert stream and by acknowledging. */
export const ALERTS_QUERY_KEY = ['alerts'] as const;

/**
 * A slow fallback poll: the alert stream (`use-alert-stream.ts`) invalidates the lists on every
 * alert event, so they change at once; polling every 30 s only bounds how stale a list gets
 * while the stream is broken or reconnecting (or the browser has no EventSource).
 */
export const ALERTS_FALLBACK_POLL_MS = 30_000;

export const getAlertsQueryOptions = (filters: AlertFilters = {}) =>
  queryOptions({
    queryKey: [...ALERTS_QUERY_KEY, 'list', filters],
    queryFn: ({ signal }) => getAlerts(filters, signal),
    refetchInterval: ALERTS_FALLBACK_POLL_MS,
  });

export function useAlerts(filters: AlertFilters = {}) {
  return useQuery(getAlertsQueryOptions(filters));
}
