/**
 * Wording of the report's numbers beyond `@/lib/format`: `null` in a bound reads "unbounded"
 * (formatDelay), in a slack, capacity or headroom "—".
 */
import type { Tone } from '@/components/ui/badge';
import type { Finding, Model } from '@/lib/api/schema';
import { formatDelay, formatRate } from '@/lib/format';

export const SEVERITY_TONES: Record<Finding['severity'], Tone> = {
  critical: 'bad',
  warning: 'warn',
  info: 'info',
};

export const SEVERITIES: Finding['severity'][] = ['critical', 'warning', 'info'];

/** Short column headings of the two models. */
export const MODEL_SHORT: Record<Model, string> = { harkous: 'Paper', netcalc: 'NC' };

/** A slack: `null` (the bound is unbounded) reads "—"; negative slack is a miss. */
export function formatSlack(seconds: number | null): string {
  return seconds === null ? '—' : formatDelay(seconds);
}

/** Capacity minus what is needed: "+12 Mbit/s" spare or "-3 Mbit/s" short. */
export function formatMargin(bps: number | null): string {
  if (bps === null) return '—';
  return bps < 0 ? formatRate(bps) : `+${formatRate(bps)}`;
}

export function formatMonthsLeft(months: number | null, horizon: number): string {
  if (months === null) return `beyond ${horizon} months`;
  if (months === 0) return 'already inadmissible';
  return months === 1 ? 'in 1 month' : `in ${months} months`;
}

/** How far every rate may grow: "×1.85 (+85 %)". */
export function formatGrowthFactor(factor: number | null): string {
  if (factor === null) return '—';
  return `×${factor.toFixed(2)} (${factor >= 1 ? '+' : '−'}${Math.abs((factor - 1) * 100).toFixed(0)} %)`;
}

/** A priority plan as "DC 7 · Enterprise 6", highest level first. */
export function formatPlan(priorities: Record<string, number> | null): string {
  if (!priorities) return '—';
  return Object.entries(priorities)
    .sort(([a, pa], [b, pb]) => pb - pa || a.localeCompare(b))
    .map(([name, p]) => `${name} ${p}`)
    .join(' · ');
}

/** A ratio of measured to declared or bounded: "0.82×". */
export function formatRatio(ratio: number | null): string {
  return ratio === null || !Number.isFinite(ratio) ? '—' : `${ratio.toFixed(2)}×`;
}
