/**
 * The interface of SLA alerts, served by the alerting workers (not in the OpenAPI document
 * yet: until they land, `GET /api/v1/alerts` answers 404 and the views say "not available
 * yet"). When the endpoints exist, regenerate the client and type these calls from it.
 *
 * - `GET  /api/v1/alerts?state=firing|resolved`  → `{data: Alert[], count}` (or a bare list)
 * - `POST /api/v1/alerts/{id}/ack`                → the acknowledged alert
 */
import { queryOptions, useQuery } from '@tanstack/react-query';

import { requestJson } from '@/lib/api-client';

export type AlertState = 'firing' | 'resolved';

export interface Alert {
  id: number;
  slice_id: number;
  slice_name?: string | null;
  /** What broke: 'delay', 'throughput', 'loss', 'marks' (the backend's `rule`). */
  rule?: string;
  kind?: string;
  severity?: 'warning' | 'critical' | string | null;
  state: AlertState;
  message: string;
  value?: number | null;
  threshold?: number | null;
  started_at: string;
  resolved_at?: string | null;
  acknowledged_at?: string | null;
  acknowledged_by?: number | string | null;
}

export function parseAlerts(body: unknown): Alert[] {
  const list = Array.isArray(body)
    ? body
    : body && typeof body === 'object' && Array.isArray((body as { data?: unknown }).data)
      ? (body as { data: unknown[] }).data
      : [];
  return list.filter(
    (a): a is Alert =>
      !!a && typeof a === 'object' && typeof (a as Alert).id === 'number' && typeof (a as Alert).slice_id === 'number',
  );
}

export async function getAlerts(state?: AlertState, signal?: AbortSignal) {
  const query = state ? `?state=${state}&limit=500` : '?limit=500';
  return parseAlerts(await requestJson<unknown>(`/api/v1/alerts${query}`, signal ? { signal } : {}));
}

export const getAlertsQueryOptions = (state?: AlertState) =>
  queryOptions({
    queryKey: ['alerts', 'list', state ?? 'all'],
    queryFn: ({ signal }) => getAlerts(state, signal),
    refetchInterval: 5000,
  });

export function useAlerts(state?: AlertState) {
  return useQuery(getAlertsQueryOptions(state));
}
