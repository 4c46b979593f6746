/**
 * The interface of the slice telemetry the workers will publish. Everything the live view
 * reads goes through this folder; nothing else knows the endpoints:
 *
 * - `GET /api/v1/slices/{id}/telemetry/stream`: Server-Sent Events, one JSON sample per event
 *   (about one a second), read by `use-telemetry-stream.ts`;
 * - `GET /api/v1/slices/{id}/telemetry?start=&end=`: the samples of a past range (ISO 8601
 *   times), as `{data: [...]}` (the backend's TelemetryPublic) or a bare list.
 *
 * A sample: `{t, slice_id, throughput_bps, drop_ratio, mark_ratio, vq_delay_p50_s,
 * vq_delay_p95_s, vq_delay_p99_s, rq_delay_p50_s, rq_delay_p95_s, rq_delay_p99_s, cdf}` with
 * `t` in epoch seconds (or an ISO string) and the delay CDF over the histogram bucket edges,
 * either as the backend's `vq_cdf` / `rq_cdf` (`[[edge_s, fraction], …]`) or as one `cdf`
 * list `[{le_s, vq, rq?}]` / `[[le_s, vq, rq?]]`.
 * The endpoints are not in the OpenAPI document yet; they answer 404 until the workers land,
 * and the view says "not available yet". When they exist, regenerate the client and type
 * these calls from it.
 */
import { keepPreviousData, useQuery } from '@tanstack/react-query';

import { requestJson } from '@/lib/api-client';

export interface CdfPoint {
  /** Upper edge of the histogram bucket, seconds (Infinity for the last). */
  delayS: number;
  /** Fraction of packets whose virtual-queue delay is ≤ delayS. */
  virtual: number;
  /** Same for the real queue, when reported. */
  real: number | null;
}

export interface TelemetrySample {
  /** Epoch seconds. */
  t: number;
  sliceId: number;
  throughputBps: number;
  dropRatio: number;
  markRatio: number;
  vq: { p50: number | null; p95: number | null; p99: number | null };
  rq: { p50: number | null; p95: number | null; p99: number | null };
  cdf: CdfPoint[];
}

function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function parseCdf(raw: unknown): CdfPoint[] {
  if (!Array.isArray(raw)) return [];
  const points: CdfPoint[] = [];
  for (const item of raw) {
    let delay: unknown;
    let vq: unknown;
    let rq: unknown;
    if (Array.isArray(item)) [delay, vq, rq] = item;
    else if (item && typeof item === 'object') {
      const o = item as Record<string, unknown>;
      delay = 'le_s' in o ? o.le_s : o.delay_s;
      vq = o.vq ?? o.fraction ?? o.p;
      rq = o.rq;
    }
    const d = delay === null || delay === 'inf' ? Infinity : typeof delay === 'number' ? delay : NaN;
    const v = num(vq);
    if (Number.isNaN(d) || v === null) continue;
    points.push({ delayS: d, virtual: v, real: num(rq) });
  }
  return points.sort((a, b) => a.delayS - b.delayS);
}

/** The backend's separate `vq_cdf` and `rq_cdf` (`[[edge_s, fraction], …]`) as one CDF. */
function mergeCdfs(vq: unknown, rq: unknown): CdfPoint[] {
  const real = new Map(parseCdf(rq).map((p) => [p.delayS, p.virtual] as const));
  const points = parseCdf(vq).map((p) => ({ ...p, real: real.get(p.delayS) ?? null }));
  if (points.length === 0) {
    return parseCdf(rq).map((p) => ({ delayS: p.delayS, virtual: Number.NaN, real: p.virtual }));
  }
  return points;
}

/** A sample from the wire, or null when it is not one (bad samples are skipped, not fatal). */
export function parseSample(raw: unknown): TelemetrySample | null {
  if (!raw || typeof raw !== 'object') return null;
  const o = raw as Record<string, unknown>;
  const t = typeof o.t === 'string' ? Date.parse(o.t) / 1000 : num(o.t);
  const throughput = num(o.throughput_bps);
  if (t === null || Number.isNaN(t) || throughput === null) return null;
  return {
    t,
    sliceId: num(o.slice_id) ?? 0,
    throughputBps: throughput,
    dropRatio: num(o.drop_ratio) ?? 0,
    markRatio: num(o.mark_ratio) ?? 0,
    vq: { p50: num(o.vq_delay_p50_s), p95: num(o.vq_delay_p95_s), p99: num(o.vq_delay_p99_s) },
    rq: { p50: num(o.rq_delay_p50_s), p95: num(o.rq_delay_p95_s), p99: num(o.rq_delay_p99_s) },
    cdf: o.cdf !== undefined ? parseCdf(o.cdf) : mergeCdfs(o.vq_cdf, o.rq_cdf),
  };
}

export function parseSamples(body: unknown): TelemetrySample[] {
  const list = Array.isArray(body)
    ? body
    : body && typeof body === 'object' && Array.isArray((body as { data?: unknown }).data)
      ? (body as { data: unknown[] }).data
      : [];
  return list.map(parseSample).filter((s): s is TelemetrySample => s !== null).sort((a, b) => a.t - b.t);
}

export const telemetryPaths = {
  stream: (sliceId: number) => `/api/v1/slices/${sliceId}/telemetry/stream`,
  history: (sliceId: number, from: Date, to: Date) =>
    `/api/v1/slices/${sliceId}/telemetry?start=${encodeURIComponent(from.toISOString())}&end=${encodeURIComponent(to.toISOString())}`,
};

export async function getTelemetryHistory(sliceId: number, from: Date, to: Date, signal?: AbortSignal) {
  const body = await requestJson<unknown>(telemetryPaths.history(sliceId, from, to), signal ? { signal } : {});
  return parseSamples(body);
}

/** The samples of the last `rangeS` seconds (refreshed every 30 s), for the history view. */
export function useTelemetryHistory(sliceId: number, rangeS: number | null) {
  return useQuery({
    queryKey: ['telemetry', sliceId, 'history', rangeS],
    queryFn: ({ signal }) => {
      const to = new Date();
      const from = new Date(to.getTime() - (rangeS ?? 0) * 1000);
      return getTelemetryHistory(sliceId, from, to, signal);
    },
    enabled: rangeS !== null,
    refetchInterval: 30_000,
    placeholderData: keepPreviousData,
  });
}
