import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';

import type { Model, SlicesDocument } from '@/lib/api/schema';
import { api, unwrap } from '@/lib/api-client';

/** The least capacity that keeps every slice of `doc` within its target. */
export async function getMinCapacity(doc: SlicesDocument, model: Model, signal?: AbortSignal) {
  return unwrap(
    api.POST('/api/v1/analysis/min-capacity', {
      params: { query: { model } },
      body: doc,
      signal,
    }),
  );
}

export const getMinCapacityQueryOptions = (doc: SlicesDocument, model: Model) =>
  queryOptions({
    queryKey: ['analysis', 'min-capacity', model, doc],
    queryFn: ({ signal }) => getMinCapacity(doc, model, signal),
    staleTime: Infinity,
  });

export function useMinCapacity(doc: SlicesDocument | null, model: Model) {
  return useQuery({
    ...getMinCapacityQueryOptions(doc ?? { slices: [] }, model),
    enabled: doc !== null && doc.slices.length > 0,
    placeholderData: keepPreviousData,
  });
}
