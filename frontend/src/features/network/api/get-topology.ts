import { queryOptions, useQuery } from '@tanstack/react-query';

import { api, unwrap } from '@/lib/api-client';

/** How often the topology re-reads utilisation and health. */
export const TOPOLOGY_REFRESH_MS = 5_000;

export function getTopology(signal?: AbortSignal) {
  return unwrap(api.GET('/api/v1/topology', { signal }));
}

export const getTopologyQueryOptions = () =>
  queryOptions({
    queryKey: ['topology'],
    queryFn: ({ signal }) => getTopology(signal),
    refetchInterval: TOPOLOGY_REFRESH_MS,
  });

export function useTopology() {
  return useQuery(getTopologyQueryOptions());
}
