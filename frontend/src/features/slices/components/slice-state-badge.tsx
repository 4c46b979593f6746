import { Badge, type Tone } from '@/components/ui/badge';
import type { SliceState } from '@/lib/api/schema';

const STATES: Record<SliceState, { label: string; tone: Tone; hint: string }> = {
  pending: { label: 'Pending deployment', tone: 'warn', hint: 'Admitted; not on the switches yet.' },
  deploying: { label: 'Deploying', tone: 'info', hint: 'Entries are being written to the switches.' },
  active: { label: 'Active', tone: 'ok', hint: 'On every switch it crosses.' },
  failed: { label: 'Failed', tone: 'bad', hint: 'The last deployment failed; see the switch errors.' },
};

export function SliceStateBadge({ state }: { state: SliceState }) {
  const info = STATES[state];
  return (
    <Badge tone={info.tone} title={info.hint}>
      {info.label}
    </Badge>
  );
}

export const SLICE_STATES = Object.keys(STATES) as SliceState[];
export const sliceStateLabel = (state: SliceState) => STATES[state].label;
