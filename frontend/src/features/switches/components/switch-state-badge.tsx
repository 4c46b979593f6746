import { Badge, type Tone } from '@/components/ui/badge';
import type { SwitchPublic, SwitchState } from '@/lib/api/schema';
import { formatDateTime, formatRelative } from '@/lib/format';

const STATES: Record<SwitchState, { label: string; tone: Tone }> = {
  unknown: { label: 'Not contacted yet', tone: 'neutral' },
  reachable: { label: 'Reachable', tone: 'ok' },
  unreachable: { label: 'Unreachable', tone: 'bad' },
};

export function SwitchStateBadge({ state }: { state: SwitchState }) {
  const info = STATES[state];
  return <Badge tone={info.tone}>{info.label}</Badge>;
}

/** What the reconcile worker has not reported (yet) for this switch. */
export function NotReported({ what }: { what: string }) {
  return (
    <span className="muted" title={`${what} is reported by the reconcile worker once it has contacted the switch.`}>
      not reported yet
    </span>
  );
}

/** Never "in sync" for a switch that does not answer: what it holds is not known then (the API
 * reports `pipeline_in_sync` and `entries_installed` as null). */
export function PipelineSync({ sw }: { sw: Pick<SwitchPublic, 'sync' | 'state'> }) {
  if (!sw.sync) return <NotReported what="Pipeline sync" />;
  const { pipeline_in_sync: inSync, entries_installed: installed, entries_desired: desired } = sw.sync;
  if (sw.state === 'unreachable' || inSync === null || installed === null) {
    return (
      <span className="row" style={{ gap: 6 }}>
        <Badge tone="bad" title="The switch does not answer: what it holds is not known.">unknown</Badge>
        <span className="muted small">?/{desired} entries</span>
      </span>
    );
  }
  return (
    <span className="row" style={{ gap: 6 }}>
      <Badge tone={inSync && installed === desired ? 'ok' : 'warn'}>{inSync ? 'in sync' : 'out of sync'}</Badge>
      <span className="muted small">
        {installed}/{desired} entries
      </span>
    </span>
  );
}

export function LastReconcile({ sw }: { sw: Pick<SwitchPublic, 'sync'> }) {
  const at = sw.sync?.last_reconcile_at;
  if (!at) return <NotReported what="The last reconcile" />;
  return <span title={formatDateTime(at)}>{formatRelative(at)}</span>;
}

export function SwitchErrors({ sw }: { sw: Pick<SwitchPublic, 'sync'> }) {
  if (!sw.sync) return <NotReported what="Switch errors" />;
  if (!sw.sync.last_error) return <span className="bound-ok">none</span>;
  return <span className="bound-bad">{sw.sync.last_error}</span>;
}
