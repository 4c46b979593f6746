/**
 * The slice telemetry the live view reads, converted from the API's `TelemetrySample`
 * (docs/telemetry.md; typed from the generated client). The calls are one file each:
 *
 * - `get-telemetry-history.ts`: `GET /api/v1/slices/{id}/telemetry?start=&end=&resolution=`;
 * - `use-telemetry-stream.ts`: `GET /api/v1/slices/{id}/telemetry/stream` with an EventSource
 *   (event `sample`, one JSON sample per poll of the slice and switch), authenticated by the
 *   session cookie.
 *
 * Delays are histogram bucket edges, each slice's own (its delay target T and T/16 … 7T/8
 * below it); the CDFs are `[edge_s, fraction]` at each finite edge, separately for the
 * virtual (`vq_cdf`) and real (`rq_cdf`) queue, so a sample carries its edges.
 *
 * A codel slice's raw samples carry CoDel's state (`codel`), an abc slice's its busiest
 * aggregates and average activity (`abc`), where the switch reads registers; a raw sample
 * whose `registers` are null comes from a switch that cannot (BMv2).
 */
import type { TelemetrySample as WireSample } from '@/lib/api/schema';

export interface CdfPoint {
  /** Upper edge of the histogram bucket, seconds. */
  delayS: number;
  /** Fraction of forwarded packets whose virtual-queue delay is below delayS (null: none). */
  virtual: number | null;
  /** Same for the real queue. */
  real: number | null;
}

export interface DropsByReason {
  /** At the burst limit: the virtual queue was full (`vq_drop_ratio`). */
  burstLimit: number;
  /** By the real queue, which was full (`rq_drop_ratio`). */
  realQueue: number;
  /** By the slice's queue management, CoDel or ABC (`aqm_drop_ratio`; 0 for other schemes). */
  aqm: number;
}

/** One aggregate slot of an abc slice's meters, at the slice's newest meter update. */
export interface AbcAggregate {
  /** The meter slot its source hashes to (0–63); sources sharing a slot share a meter. */
  slot: number;
  rateBps: number;
  /** log2(rate / the slice's reference rate). */
  activity: number;
  /** Seconds its last packet came before the slice's newest. */
  idleS: number;
}

/** An abc slice's ABC at the reading (its meter and average registers). */
export interface AbcState {
  averageActivity: number;
  /** Slots metered within one meter memory of the newest update. */
  activeSlots: number;
  /** The busiest slots, by rate (at most five). */
  aggregates: AbcAggregate[];
}

/** A codel slice's CoDel at the reading (its registers `codel_dropping`, `codel_count`). */
export interface CodelState {
  dropping: boolean;
  /** Drops (or marks) of the current spell, or of the last one while not dropping. */
  count: number;
}

export interface TelemetrySample {
  /** Epoch seconds (end of the interval). */
  t: number;
  sliceId: number;
  switchId: number;
  intervalS: number;
  throughputBps: number;
  offeredBps: number;
  dropRatio: number;
  /** Drops by reason, each over the offered packets: they add up to dropRatio. */
  drops: DropsByReason;
  markRatio: number;
  vq: { p50: number | null; p95: number | null; p99: number | null };
  rq: { p50: number | null; p95: number | null; p99: number | null };
  cdf: CdfPoint[];
  /**
   * The finite edges of the sample's delay histograms, ascending (from its CDFs; empty
   * without packets): the last is the slice's delay target when the sample was counted.
   */
  edges: number[];
  /** CoDel's state (null: not a codel slice, not read, or a sum). */
  codel: CodelState | null;
  /** ABC's state (null: not an abc slice, not read, or a sum). */
  abc: AbcState | null;
  /**
   * Whether the switch read registers for this sample: false for a raw sample without them
   * (the switch cannot: BMv2, p4lang/PI#376); null for a sum (minute rows, history buckets),
   * which carries none either way.
   */
  registersRead: boolean | null;
}

function codelState(value: unknown): CodelState | null {
  if (!value || typeof value !== 'object') return null;
  const o = value as Partial<CodelState>;
  const count = num(o.count);
  return typeof o.dropping === 'boolean' && count !== null ? { dropping: o.dropping, count } : null;
}

function abcState(value: unknown): AbcState | null {
  if (!value || typeof value !== 'object') return null;
  const o = value as { average_activity?: unknown; active_slots?: unknown; aggregates?: unknown };
  const average = num(o.average_activity);
  const active = num(o.active_slots);
  if (average === null || active === null || !Array.isArray(o.aggregates)) return null;
  const aggregates: AbcAggregate[] = [];
  for (const item of o.aggregates as unknown[]) {
    if (!item || typeof item !== 'object') continue;
    const a = item as { slot?: unknown; rate_bps?: unknown; activity?: unknown; idle_s?: unknown };
    const [slot, rateBps, activity, idleS] = [num(a.slot), num(a.rate_bps), num(a.activity), num(a.idle_s)];
    if (slot !== null && rateBps !== null && activity !== null && idleS !== null) {
      aggregates.push({ slot, rateBps, activity, idleS });
    }
  }
  return { averageActivity: average, activeSlots: active, aggregates };
}

function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** `vq_cdf` and `rq_cdf` as one CDF over the union of their edges, sorted by delay. */
export function mergeCdfs(vq: WireSample['vq_cdf'], rq: WireSample['rq_cdf']): CdfPoint[] {
  const points = new Map<number, CdfPoint>();
  const add = (list: unknown, key: 'virtual' | 'real') => {
    if (!Array.isArray(list)) return;
    for (const item of list) {
      if (!Array.isArray(item)) continue;
      const edge = num(item[0]);
      const fraction = num(item[1]);
      if (edge === null || fraction === null) continue;
      const point = points.get(edge) ?? { delayS: edge, virtual: null, real: null };
      point[key] = fraction;
      points.set(edge, point);
    }
  };
  add(vq, 'virtual');
  add(rq, 'real');
  return [...points.values()].sort((a, b) => a.delayS - b.delayS);
}

/** A sample from the wire (SSE data is unchecked JSON), or null when it is not one. */
export function parseSample(raw: unknown): TelemetrySample | null {
  if (!raw || typeof raw !== 'object') return null;
  const o = raw as Partial<WireSample>;
  const t = typeof o.t === 'string' ? Date.parse(o.t) / 1000 : NaN;
  const throughput = num(o.throughput_bps);
  if (Number.isNaN(t) || throughput === null) return null;
  const cdf = mergeCdfs(o.vq_cdf ?? [], o.rq_cdf ?? []);
  return {
    t,
    sliceId: num(o.slice_id) ?? 0,
    switchId: num(o.switch_id) ?? 0,
    intervalS: num(o.interval_s) ?? 0,
    throughputBps: throughput,
    offeredBps: num(o.offered_bps) ?? throughput,
    dropRatio: num(o.drop_ratio) ?? 0,
    drops: {
      burstLimit: num(o.vq_drop_ratio) ?? 0,
      realQueue: num(o.rq_drop_ratio) ?? 0,
      aqm: num(o.aqm_drop_ratio) ?? 0,
    },
    markRatio: num(o.mark_ratio) ?? 0,
    vq: { p50: num(o.vq_delay_p50_s), p95: num(o.vq_delay_p95_s), p99: num(o.vq_delay_p99_s) },
    rq: { p50: num(o.rq_delay_p50_s), p95: num(o.rq_delay_p95_s), p99: num(o.rq_delay_p99_s) },
    cdf,
    edges: cdf.map((p) => p.delayS),
    codel: codelState(o.codel),
    abc: abcState(o.abc),
    registersRead: o.downsampled !== false || o.registers === undefined ? null : o.registers !== null,
  };
}

/** Samples oldest first, skipping what is not one. */
export function parseSamples(list: readonly unknown[]): TelemetrySample[] {
  return list.map(parseSample).filter((s): s is TelemetrySample => s !== null).sort((a, b) => a.t - b.t);
}
