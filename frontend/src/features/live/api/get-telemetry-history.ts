import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';

import { api, unwrap } from '@/lib/api-client';

import { parseSamples } from './telemetry';

/** Points the history asks for at most; the API picks the resolution when not given. */
export const HISTORY_POINTS = 900;

/** Seconds per point for `rangeS` seconds in at most HISTORY_POINTS points (1 s at least). */
export function historyResolution(rangeS: number): number {
  return Math.max(1, Math.ceil(rangeS / HISTORY_POINTS));
}

/** The slice's samples with `start < t <= end` (every switch), oldest first. */
export async function getTelemetryHistory(sliceId: number, start: Date, end: Date, resolution?: number, signal?: AbortSignal) {
  const body = await unwrap(
    api.GET('/api/v1/slices/{slice_id}/telemetry', {
      params: {
        path: { slice_id: sliceId },
        query: { start: start.toISOString(), end: end.toISOString(), ...(resolution ? { resolution } : {}) },
      },
      signal,
    }),
  );
  return { ...body, samples: parseSamples(body.data) };
}

export const getTelemetryHistoryQueryOptions = (sliceId: number, rangeS: number) =>
  queryOptions({
    queryKey: ['telemetry', sliceId, 'history', rangeS],
    queryFn: ({ signal }) => {
      const end = new Date();
      const start = new Date(end.getTime() - rangeS * 1000);
      return getTelemetryHistory(sliceId, start, end, historyResolution(rangeS), signal);
    },
    refetchInterval: 30_000,
    placeholderData: keepPreviousData,
  });

/** The samples of the last `rangeS` seconds (refreshed every 30 s); disabled for null. */
export function useTelemetryHistory(sliceId: number, rangeS: number | null) {
  return useQuery({ ...getTelemetryHistoryQueryOptions(sliceId, rangeS ?? 0), enabled: rangeS !== null });
}
