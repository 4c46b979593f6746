/**
 * Helpers around the documents of the analysis endpoints (`/api/v1/analysis/*`,
 * `/links/{id}/analysis`). Their types (`LinkDocument`, `SliceDocument`, `LinkAnalysis`,
 * `SliceBound`, `MinCapacity`, `PriorityPlan`, `LinkDelayCurves`) are generated from the OpenAPI
 * document (`sliceportal/schemas/analysis.py`) into `./api/schema`. All bounds are computed by
 * the API: this module only builds the documents and reads the answers.
 */
import type { LinkAnalysis, LinkDocument, LinkPublic, Model, SliceBound, SliceDocument, SlicePublic } from './api/schema';
import { formatDelay, formatRate } from './format';

export const MODELS: readonly Model[] = ['harkous', 'netcalc'];

/** The server's default (`Settings.default_model`, `domain.spec.DEFAULT_MODEL`): the sound bound. */
export const DEFAULT_MODEL: Model = 'netcalc';

export const MODEL_LABELS: Record<Model, string> = {
  harkous: 'paper (eq. 3, not an upper bound)',
  netcalc: 'network calculus (sound)',
};

export const MODEL_HINTS: Record<Model, string> = {
  harkous:
    "The paper's busy-period equations (1)–(4): shown for comparison, not an upper bound (higher levels keep sending while a lower level waits).",
  netcalc:
    'Strict-priority, non-preemptive network calculus: the sound bound and the default; one lower-priority frame of blocking (best effort’s largest frame at least).',
};

/** Unclassified traffic's priority (`domain.spec.BEST_EFFORT_PRIORITY`): never a slice's. */
export const BEST_EFFORT_PRIORITY = 0;
/** The priorities slices may use, highest first (`domain.spec.check_priority`: 1 to 7). */
export const SLICE_PRIORITIES: readonly number[] = [7, 6, 5, 4, 3, 2, 1];

/** Priority levels the slices of a link may use: every queue but best effort's. */
export function sliceLevels(queueCount: number): number {
  return Math.max(1, Math.min(queueCount, 8) - 1);
}

/** What a link's capacity counts (`links.frame_overhead_bytes`): frame bytes or line rate. */
export const FRAME_OVERHEADS: readonly { bytes: number; label: string }[] = [
  { bytes: 0, label: 'frame bytes (0)' },
  { bytes: 24, label: 'line rate (24)' },
];

/** A stored slice as the analytics sees it (as `services.admission.stored_specs` does). */
export function sliceDoc(slice: Pick<SlicePublic, 'name' | 'rate_bps' | 'priority' | 'burst_limit_s' | 'delay_target_s' | 'max_packet_bytes'>): SliceDocument {
  const doc: SliceDocument = {
    name: slice.name,
    rate_bps: slice.rate_bps,
    priority: slice.priority,
    burst_limit_s: slice.burst_limit_s,
    delay_target_s: slice.delay_target_s,
  };
  if (slice.max_packet_bytes !== null && slice.max_packet_bytes !== undefined) {
    doc.max_packet_bytes = slice.max_packet_bytes;
  }
  return doc;
}

export function linkDocument(
  link: Pick<LinkPublic, 'capacity_bps' | 'mtu_bytes'> & Partial<Pick<LinkPublic, 'frame_overhead_bytes'>>,
  slices: readonly SliceDocument[],
): LinkDocument {
  const doc: LinkDocument = { capacity_bps: link.capacity_bps, mtu_bytes: link.mtu_bytes, slices: [...slices] };
  if (link.frame_overhead_bytes) doc.frame_overhead_bytes = link.frame_overhead_bytes;
  return doc;
}

/**
 * The smallest slack of the link's slices: a number, `null` when some slice is unbounded,
 * `undefined` for a link without slices.
 */
export function worstSlack(analysis: Pick<LinkAnalysis, 'slices'>): number | null | undefined {
  let worst: number | undefined;
  for (const bound of analysis.slices) {
    if (bound.slack_s === null) return null;
    if (worst === undefined || bound.slack_s < worst) worst = bound.slack_s;
  }
  return worst;
}

/** Sum of the rate limits at `priority` and above. */
export function rateAtOrAbove(slices: readonly SliceDocument[], priority: number): number {
  return slices.filter((s) => s.priority >= priority).reduce((sum, s) => sum + s.rate_bps, 0);
}

/**
 * Why a slice misses its target, in the words of the API's admission violations
 * (`domain.bounds.make_violation`), from the numbers the API computed.
 */
export function violationReason(
  bound: SliceBound,
  doc: LinkDocument,
  capacityBps: number,
): string | null {
  if (bound.meets_target) return null;
  const cumulative = rateAtOrAbove(doc.slices, bound.priority);
  const total = rateAtOrAbove(doc.slices, 0);
  if (cumulative > capacityBps) {
    const excess = formatRate(cumulative - capacityBps);
    return cumulative === total
      ? `rate limits exceed capacity by ${excess}`
      : `rate limits at priority ${bound.priority} and above exceed capacity by ${excess}`;
  }
  if (bound.worst_case_delay_s === null) {
    return `worst-case delay is unbounded (residual capacity ${formatRate(bound.residual_capacity_bps)})`;
  }
  return `worst-case delay ${formatDelay(bound.worst_case_delay_s)} exceeds target ${formatDelay(bound.delay_target_s)}`;
}

export interface LevelRow {
  priority: number;
  /** C − Σ rates of strictly higher priorities. */
  residualBps: number;
  rateBps: number;
  slices: { name: string; rateBps: number }[];
  /** The level's worst-case delay (null: unbounded; undefined: empty level). */
  boundS: number | null | undefined;
  minTargetS: number | undefined;
  meets: boolean | undefined;
}

/** The seven slice priority levels, 7 first, with the slices stacked in each (best effort,
 * priority 0, gets what is left below level 1). */
export function priorityLevels(
  doc: LinkDocument,
  capacityBps: number,
  analysis: LinkAnalysis | undefined,
): LevelRow[] {
  const rows: LevelRow[] = [];
  let above = 0;
  for (const priority of SLICE_PRIORITIES) {
    const members = doc.slices.filter((s) => s.priority === priority);
    const rate = members.reduce((sum, s) => sum + s.rate_bps, 0);
    const bounds = analysis?.slices.filter((b) => b.priority === priority) ?? [];
    rows.push({
      priority,
      residualBps: capacityBps - above,
      rateBps: rate,
      slices: members.map((s) => ({ name: s.name, rateBps: s.rate_bps })),
      boundS: bounds.length ? (bounds[0]?.worst_case_delay_s ?? null) : undefined,
      minTargetS: bounds.length ? Math.min(...bounds.map((b) => b.delay_target_s)) : undefined,
      meets: bounds.length ? bounds.every((b) => b.meets_target) : undefined,
    });
    above += rate;
  }
  return rows;
}
