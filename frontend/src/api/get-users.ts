import { queryOptions, useQuery } from '@tanstack/react-query';

import { api, unwrap } from '@/lib/api-client';

export function getUsers(signal?: AbortSignal) {
  return unwrap(api.GET('/api/v1/users', { params: { query: { limit: 1000 } }, signal }));
}

export const getUsersQueryOptions = () =>
  queryOptions({ queryKey: ['users', 'list'], queryFn: ({ signal }) => getUsers(signal) });

export function useUsers(enabled = true) {
  return useQuery({ ...getUsersQueryOptions(), enabled });
}
