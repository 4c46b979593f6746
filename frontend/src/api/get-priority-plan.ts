import { queryOptions, useQuery } from '@tanstack/react-query';

import type { LinkDocument, Model } from '@/lib/api/schema';
import { api, unwrap } from '@/lib/api-client';

/** Priorities (at most `levels` of them, from 7 down) meeting every target, or why none do. */
export async function getPriorityPlan(
  doc: LinkDocument,
  model: Model,
  levels: number,
  signal?: AbortSignal,
) {
  return unwrap(
    api.POST('/api/v1/analysis/priority-plan', {
      params: { query: { model, levels } },
      body: doc,
      signal,
    }),
  );
}

export const getPriorityPlanQueryOptions = (doc: LinkDocument, model: Model, levels: number) =>
  queryOptions({
    queryKey: ['analysis', 'priority-plan', model, levels, doc],
    queryFn: ({ signal }) => getPriorityPlan(doc, model, levels, signal),
    staleTime: Infinity,
  });

export function usePriorityPlan(doc: LinkDocument | null, model: Model, levels: number) {
  return useQuery({
    ...getPriorityPlanQueryOptions(doc ?? { capacity_bps: 0, slices: [] }, model, levels),
    enabled: doc !== null && doc.slices.length > 0,
  });
}
