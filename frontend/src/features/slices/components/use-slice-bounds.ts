import { useLinkAnalyses } from '@/api/get-link-analysis';
import type { SliceBound, SlicePublic } from '@/lib/api/schema';

export interface SliceHealth {
  /** 'ok': within its bound on every link; 'bad': misses it on one; 'unknown': not loaded. */
  status: 'ok' | 'bad' | 'unknown';
  /** Smallest slack over its links (null: unbounded somewhere). */
  slackS: number | null | undefined;
  /** Largest worst-case delay over its links (null: unbounded). */
  worstBoundS: number | null | undefined;
  /** Sum of the worst-case delays over its links, the end-to-end bound (null: unbounded). */
  totalBoundS: number | null | undefined;
  perLink: Map<number, SliceBound | undefined>;
}

export function healthOf(
  slice: Pick<SlicePublic, 'name' | 'link_ids'>,
  analyses: Map<number, { slices: SliceBound[] } | undefined>,
): SliceHealth {
  const perLink = new Map<number, SliceBound | undefined>();
  let status: SliceHealth['status'] = 'ok';
  let slack: number | null | undefined;
  let worst: number | null | undefined;
  let total: number | null | undefined = 0;
  for (const linkId of slice.link_ids) {
    const analysis = analyses.get(linkId);
    const bound = analysis?.slices.find((b) => b.name === slice.name);
    perLink.set(linkId, bound);
    if (!bound) {
      if (status !== 'bad') status = 'unknown';
      if (total !== null) total = undefined;
      continue;
    }
    if (!bound.meets_target) status = 'bad';
    if (bound.slack_s === null || slack === null) slack = null;
    else slack = slack === undefined ? bound.slack_s : Math.min(slack, bound.slack_s);
    if (bound.worst_case_delay_s === null || worst === null) worst = null;
    else worst = worst === undefined ? bound.worst_case_delay_s : Math.max(worst, bound.worst_case_delay_s);
    if (bound.worst_case_delay_s === null) total = null;
    else if (total !== null && total !== undefined) total += bound.worst_case_delay_s;
  }
  return { status, slackS: slack, worstBoundS: worst, totalBoundS: total, perLink };
}

/** The analytical bounds of one slice on each of its links, from the links' analyses. */
export function useSliceBounds(slice: SlicePublic | undefined): SliceHealth | undefined {
  const analyses = useLinkAnalyses(slice?.link_ids ?? []);
  if (!slice) return undefined;
  return healthOf(slice, analyses.byLink);
}
