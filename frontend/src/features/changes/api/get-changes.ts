import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';

import type { ChangeAction, EntityType } from '@/lib/api/schema';
import { api, unwrap } from '@/lib/api-client';

export interface ChangeFilters {
  entity_type?: EntityType;
  action?: ChangeAction;
  request_id?: string;
  skip?: number;
  limit?: number;
}

/** The change log, newest first (operators and admins). */
export function getChanges(filters: ChangeFilters = {}, signal?: AbortSignal) {
  return unwrap(api.GET('/api/v1/changes', { params: { query: filters }, signal }));
}

export const getChangesQueryOptions = (filters: ChangeFilters = {}) =>
  queryOptions({
    queryKey: ['changes', filters],
    queryFn: ({ signal }) => getChanges(filters, signal),
  });

export function useChanges(filters: ChangeFilters = {}) {
  return useQuery({ ...getChangesQueryOptions(filters), placeholderData: keepPreviousData });
}
