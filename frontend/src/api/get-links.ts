import { queryOptions, useQuery } from '@tanstack/react-query';

import type { Model } from '@/lib/api/schema';
import { api, unwrap } from '@/lib/api-client';

export interface LinkFilters {
  switch_id?: number;
  model?: Model;
  q?: string;
}

export function getLinks(filters: LinkFilters = {}, signal?: AbortSignal) {
  return unwrap(api.GET('/api/v1/links', { params: { query: { ...filters, limit: 1000 } }, signal }));
}

export const getLinksQueryOptions = (filters: LinkFilters = {}) =>
  queryOptions({
    queryKey: ['links', 'list', filters],
    queryFn: ({ signal }) => getLinks(filters, signal),
  });

export function useLinks(filters: LinkFilters = {}) {
  return useQuery(getLinksQueryOptions(filters));
}
