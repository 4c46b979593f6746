/**
 * An abc slice's ABC on the live view: its busiest aggregates with their rates and
 * activities, the slice's average activity and the drop threshold each aggregate's packets
 * meet, read from the switch's registers (docs/telemetry.md), or why they cannot be shown.
 */
import type { AbcSettings, QueueScheme } from '@/lib/api/schema';
import { formatDelay, formatRate } from '@/lib/format';

import type { AbcState, TelemetrySample } from '../api/telemetry';

export const ABC_REGISTERS_UNREADABLE =
  "ABC's busiest aggregates and average activity are not shown: this switch cannot read registers (BMv2's P4Runtime server does not implement register reads, p4lang/PI#376); ABC's drops are still counted, in the drops by reason.";

/** The label of the shared queue-management drop counter (`aqm_drop_ratio`) for a scheme. */
export function aqmLabel(scheme: QueueScheme | undefined): string {
  return scheme === 'abc' ? 'ABC' : 'CoDel';
}

/**
 * The queueing delay above which ABC drops a packet of `activity` while the slice's average
 * is `average`: `max(Q_min, Q_base − gamma × (activity − average))`, at most the burst limit
 * (the paper's threshold, as the switch computes it for the packet's arrival).
 */
export function dropThresholdS(abc: AbcSettings, burstLimitS: number, activity: number, average: number): number {
  const threshold = Math.max(abc.q_min_s, abc.q_base_s - abc.gamma_s * (activity - average));
  return Math.min(burstLimitS, threshold);
}

/** What to show for the latest sample: its ABC state, the reason the switch cannot read it,
 * or nothing (another scheme, no sample yet, a sum). */
export function abcStatus(
  scheme: QueueScheme | undefined,
  sample: TelemetrySample | undefined,
): { state: AbcState } | { reason: string } | null {
  if (scheme !== 'abc' || sample === undefined) return null;
  if (sample.abc !== null) return { state: sample.abc };
  return sample.registersRead === false ? { reason: ABC_REGISTERS_UNREADABLE } : null;
}

function idle(seconds: number): string {
  return seconds < 0.001 ? 'latest' : `${formatDelay(seconds)} before`;
}

export function AbcStatus({
  scheme,
  sample,
  abc,
  burstLimitS,
}: {
  scheme: QueueScheme | undefined;
  sample: TelemetrySample | undefined;
  /** The slice's ABC parameters, for the drop thresholds (none: the column is left out). */
  abc?: AbcSettings | null | undefined;
  burstLimitS?: number | undefined;
}) {
  const found = abcStatus(scheme, sample);
  if (found === null) return null;
  if ('reason' in found) {
    return (
      <p className="muted small" data-testid="abc-state">
        {found.reason}
      </p>
    );
  }
  const { state } = found;
  const thresholds = abc && burstLimitS !== undefined;
  return (
    <div data-testid="abc-state" className="stack">
      <p className="muted small">
        ABC: average activity {state.averageActivity.toFixed(2)} · {state.activeSlots} of 64 aggregate slots metered
        within the last meter memory. Activity is log2 of a source&apos;s rate over the reference rate
        {abc ? ` (${formatRate(abc.reference_rate_bps)})` : ''}; the more active its source, the lower the queueing
        delay at which a packet is dropped.
      </p>
      {state.aggregates.length === 0 ? (
        <p className="muted small">No aggregate metered yet.</p>
      ) : (
        <table className="table" aria-label="Busiest aggregates">
          <thead>
            <tr>
              <th scope="col">Slot</th>
              <th scope="col" className="num">Rate</th>
              <th scope="col" className="num">Activity</th>
              {thresholds && <th scope="col" className="num">Drops above</th>}
              <th scope="col" className="num">Last packet</th>
            </tr>
          </thead>
          <tbody>
            {state.aggregates.map((a) => (
              <tr key={a.slot}>
                <td>{a.slot}</td>
                <td className="num">{formatRate(a.rateBps)}</td>
                <td className="num">{a.activity.toFixed(2)}</td>
                {thresholds && (
                  <td className="num">{formatDelay(dropThresholdS(abc, burstLimitS, a.activity, state.averageActivity))}</td>
                )}
                <td className="num">{idle(a.idleS)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
