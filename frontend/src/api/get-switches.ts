import { queryOptions, useQuery } from '@tanstack/react-query';

import type { SwitchKind, SwitchState } from '@/lib/api/schema';
import { api, unwrap } from '@/lib/api-client';

export interface SwitchFilters {
  q?: string;
  kind?: SwitchKind;
  state?: SwitchState;
}

export function getSwitches(filters: SwitchFilters = {}, signal?: AbortSignal) {
  return unwrap(api.GET('/api/v1/switches', { params: { query: { ...filters, limit: 1000 } }, signal }));
}

export const getSwitchesQueryOptions = (filters: SwitchFilters = {}) =>
  queryOptions({
    queryKey: ['switches', 'list', filters],
    queryFn: ({ signal }) => getSwitches(filters, signal),
  });

export function useSwitches(filters: SwitchFilters = {}) {
  return useQuery(getSwitchesQueryOptions(filters));
}
