import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';

import type { Model, SlicesDocument } from '@/lib/api/schema';
import { api, unwrap } from '@/lib/api-client';

export interface CurveRange {
  startBps: number;
  stopBps: number;
  points: number;
}

/** Every slice's worst-case delay at `points` capacities (the paper's Fig. 15). */
export async function getDelayCurves(
  doc: SlicesDocument,
  model: Model,
  range: CurveRange,
  signal?: AbortSignal,
) {
  return unwrap(
    api.POST('/api/v1/analysis/curves', {
      params: {
        query: { model, start_bps: range.startBps, stop_bps: range.stopBps, points: range.points },
      },
      body: { slices: doc.slices, mtu_bytes: doc.mtu_bytes },
      signal,
    }),
  );
}

export const getDelayCurvesQueryOptions = (doc: SlicesDocument, model: Model, range: CurveRange) =>
  queryOptions({
    queryKey: ['analysis', 'curves', model, range, doc],
    queryFn: ({ signal }) => getDelayCurves(doc, model, range, signal),
    staleTime: Infinity,
  });

export function useDelayCurves(doc: SlicesDocument | null, model: Model, range: CurveRange | null) {
  return useQuery({
    ...getDelayCurvesQueryOptions(doc ?? { slices: [] }, model, range ?? { startBps: 1, stopBps: 1, points: 1 }),
    enabled: doc !== null && doc.slices.length > 0 && range !== null,
    placeholderData: keepPreviousData,
  });
}
