import { queryOptions, useQuery } from '@tanstack/react-query';

import { env } from '@/config/env';
import { api, unwrap } from '@/lib/api-client';

/** The API answers (liveness; no dependency checked). */
export function getHealth(signal?: AbortSignal) {
  return unwrap(api.GET('/api/v1/health', { signal }));
}

export const getHealthQueryOptions = () =>
  queryOptions({
    queryKey: ['health'],
    queryFn: ({ signal }) => getHealth(signal),
    refetchInterval: (query) => (query.state.status === 'error' ? 3000 : env.healthPollMs),
    refetchIntervalInBackground: false,
    retry: false,
    staleTime: 0,
  });

export function useHealth() {
  return useQuery(getHealthQueryOptions());
}
