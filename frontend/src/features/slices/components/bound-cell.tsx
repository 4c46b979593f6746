import { formatDelay } from '@/lib/format';

/** A worst-case delay against its target: red when it misses, "unbounded" for null. */
export function BoundCell({
  bound,
  target,
  meets,
}: {
  bound: number | null | undefined;
  target: number;
  meets: boolean | undefined;
}) {
  if (bound === undefined) return <span className="muted">…</span>;
  const tone = meets === false ? 'bad' : 'ok';
  return (
    <span className={`bound bound-${tone}`} title={`target ${formatDelay(target)}`}>
      {formatDelay(bound)}
    </span>
  );
}

export function SlackCell({ slack, meets }: { slack: number | null | undefined; meets: boolean | undefined }) {
  if (slack === undefined) return <span className="muted">…</span>;
  if (slack === null) return <span className="bound-bad">—</span>;
  return (
    <span className={meets === false || slack < 0 ? 'bound-bad' : 'bound-ok'}>
      {slack >= 0 ? '+' : '−'}
      {formatDelay(Math.abs(slack))}
    </span>
  );
}
