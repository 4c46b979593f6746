/**
 * A codel slice's CoDel state on the live view: whether it is dropping and its count, read
 * from the switch's registers (docs/telemetry.md), or why it cannot be shown.
 */
import type { components } from '@/lib/api/schema';

import type { TelemetrySample } from '../api/telemetry';

type QueueScheme = components['schemas']['QueueScheme'];

export const REGISTERS_UNREADABLE =
  "CoDel's state (dropping, count) is not shown: this switch cannot read registers (BMv2's P4Runtime server does not implement register reads, p4lang/PI#376); CoDel's drops are still counted, in the drops by reason.";

/**
 * The line to show for the latest sample: CoDel's state when the sample has it, the reason
 * when the switch cannot read registers, else nothing (another scheme, no sample yet, a sum).
 */
export function codelStatus(scheme: QueueScheme | undefined, sample: TelemetrySample | undefined): string | null {
  if (scheme !== 'codel' || sample === undefined) return null;
  const state = sample.codel;
  if (state !== null) {
    if (state.dropping) return `CoDel: dropping (count ${state.count})`;
    return state.count > 0 ? `CoDel: not dropping (last spell's count ${state.count})` : 'CoDel: not dropping (no drop spell yet)';
  }
  return sample.registersRead === false ? REGISTERS_UNREADABLE : null;
}

export function CodelStatus({ scheme, sample }: { scheme: QueueScheme | undefined; sample: TelemetrySample | undefined }) {
  const line = codelStatus(scheme, sample);
  if (line === null) return null;
  return (
    <p className="muted small" data-testid="codel-state">
      {line}
    </p>
  );
}
