import { queryOptions, useQueries, useQuery } from '@tanstack/react-query';

import type { Model } from '@/lib/api/schema';
import { api, unwrap } from '@/lib/api-client';

/** Every stored slice's worst-case delay on the link, under the link's model or `model`. */
export async function getLinkAnalysis(linkId: number, model?: Model, signal?: AbortSignal) {
  const query = model ? { model } : {};
  return unwrap(
    api.GET('/api/v1/links/{link_id}/analysis', {
      params: { path: { link_id: linkId }, query },
      signal,
    }),
  );
}

export const getLinkAnalysisQueryOptions = (linkId: number, model?: Model) =>
  queryOptions({
    // Under 'slices' too: any slice change invalidates every analysis.
    queryKey: ['slices', 'link-analysis', linkId, model ?? 'link'],
    queryFn: ({ signal }) => getLinkAnalysis(linkId, model, signal),
  });

export function useLinkAnalysis(linkId: number, model?: Model) {
  return useQuery(getLinkAnalysisQueryOptions(linkId, model));
}

/** The analyses of many links at once, by link id. */
export function useLinkAnalyses(linkIds: readonly number[]) {
  return useQueries({
    queries: linkIds.map((id) => getLinkAnalysisQueryOptions(id)),
    combine: (results) => ({
      byLink: new Map(linkIds.map((id, i) => [id, results[i]?.data] as const)),
      isPending: results.some((r) => r.isPending),
      errors: results.filter((r) => r.isError).map((r) => r.error),
    }),
  });
}
