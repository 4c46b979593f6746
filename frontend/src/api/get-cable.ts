import { queryOptions, useQuery } from '@tanstack/react-query';

import { api, unwrap } from '@/lib/api-client';

export function getCable(cableId: number, signal?: AbortSignal) {
  return unwrap(api.GET('/api/v1/cables/{cable_id}', { params: { path: { cable_id: cableId } }, signal }));
}

export const getCableQueryOptions = (cableId: number) =>
  queryOptions({
    queryKey: ['cables', 'detail', cableId],
    queryFn: ({ signal }) => getCable(cableId, signal),
  });

/** The cable `cableId` (no request while it is null: a link that faces hosts has none). */
export function useCable(cableId: number | null | undefined) {
  return useQuery({ ...getCableQueryOptions(cableId ?? 0), enabled: cableId != null });
}
