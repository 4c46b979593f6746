/** A horizontal bar for a ratio (utilisation); turns amber above `warnAt`, red above 1. */
export function Meter({
  value,
  label,
  warnAt = 0.9,
}: {
  value: number;
  label: string;
  warnAt?: number;
}) {
  const clamped = Math.max(0, Math.min(1, Number.isFinite(value) ? value : 0));
  const tone = value > 1 ? 'bad' : value >= warnAt ? 'warn' : 'ok';
  return (
    <div
      className="meter"
      role="meter"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={Math.round(value * 100)}
    >
      <div className={`meter-fill meter-${tone}`} style={{ width: `${clamped * 100}%` }} />
    </div>
  );
}
