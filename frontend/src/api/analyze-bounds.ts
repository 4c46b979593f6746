import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';

import type { LinkDocument, Model } from '@/lib/api/schema';
import { api, unwrap } from '@/lib/api-client';

/** Every slice's worst-case delay on a link described by `doc` (no database involved). */
export async function analyzeBounds(doc: LinkDocument, model: Model, signal?: AbortSignal) {
  return unwrap(
    api.POST('/api/v1/analysis/bounds', {
      params: { query: { model } },
      body: doc,
      signal,
    }),
  );
}

export const analyzeBoundsQueryOptions = (doc: LinkDocument, model: Model) =>
  queryOptions({
    queryKey: ['analysis', 'bounds', model, doc],
    queryFn: ({ signal }) => analyzeBounds(doc, model, signal),
    staleTime: Infinity,
  });

/** Bounds of a document that changes as the user types: keeps the last answer meanwhile. */
export function useAnalyzeBounds(doc: LinkDocument | null, model: Model) {
  return useQuery({
    ...analyzeBoundsQueryOptions(doc ?? { capacity_bps: 0, slices: [] }, model),
    enabled: doc !== null,
    placeholderData: keepPreviousData,
  });
}
