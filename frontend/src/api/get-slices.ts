import { queryOptions, useQuery } from '@tanstack/react-query';

import type { QueueScheme, SliceState } from '@/lib/api/schema';
import { api, unwrap } from '@/lib/api-client';

export interface SliceFilters {
  q?: string;
  state?: SliceState;
  priority?: number;
  scheme?: QueueScheme;
  link_id?: number;
  switch_id?: number;
}

/** Up to 1000 slices matching the filters (the API's page limit), and their count. */
export function getSlices(filters: SliceFilters = {}, signal?: AbortSignal) {
  return unwrap(api.GET('/api/v1/slices', { params: { query: { ...filters, limit: 1000 } }, signal }));
}

export const getSlicesQueryOptions = (filters: SliceFilters = {}) =>
  queryOptions({
    queryKey: ['slices', 'list', filters],
    queryFn: ({ signal }) => getSlices(filters, signal),
  });

export function useSlices(filters: SliceFilters = {}) {
  return useQuery(getSlicesQueryOptions(filters));
}
