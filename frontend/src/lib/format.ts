/** Numbers as operators read them: SI rates, delays in the unit that fits, ratios in %. */

const RATE_UNITS: [number, string][] = [
  [1e12, 'Tbit/s'],
  [1e9, 'Gbit/s'],
  [1e6, 'Mbit/s'],
  [1e3, 'kbit/s'],
];

function trim(value: number, digits = 3): string {
  if (!Number.isFinite(value)) return String(value);
  const rounded = Number(value.toPrecision(digits));
  return rounded.toLocaleString('en-US', { maximumFractionDigits: 6 });
}

export function formatRate(bps: number | null | undefined, digits = 4): string {
  if (bps === null || bps === undefined || !Number.isFinite(bps)) return '—';
  const magnitude = Math.abs(bps);
  for (const [scale, unit] of RATE_UNITS) {
    if (magnitude >= scale) return `${trim(bps / scale, digits)} ${unit}`;
  }
  return `${trim(bps, digits)} bit/s`;
}

/** A delay in seconds; `null` means unbounded (the API's JSON for infinity). */
export function formatDelay(seconds: number | null | undefined, digits = 3): string {
  if (seconds === null) return 'unbounded';
  if (seconds === undefined || !Number.isFinite(seconds)) return '—';
  const magnitude = Math.abs(seconds);
  if (magnitude === 0) return '0 s';
  if (magnitude < 1e-3) return `${trim(seconds * 1e6, digits)} µs`;
  if (magnitude < 1) return `${trim(seconds * 1e3, digits)} ms`;
  return `${trim(seconds, digits)} s`;
}

export function formatPercent(ratio: number | null | undefined, digits = 3): string {
  if (ratio === null || ratio === undefined || !Number.isFinite(ratio)) return '—';
  return `${trim(ratio * 100, digits)} %`;
}

export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return '—';
  if (bytes >= 1e6) return `${trim(bytes / 1e6)} MB`;
  if (bytes >= 1e3) return `${trim(bytes / 1e3)} kB`;
  return `${trim(bytes)} B`;
}

export function formatDateTime(value: string | number | Date | null | undefined): string {
  if (value === null || value === undefined) return '—';
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return '—';
  return date.toLocaleString('en-GB', {
    year: 'numeric',
    month: 'short',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
}

export function formatRelative(value: string | number | Date, now = Date.now()): string {
  const date = value instanceof Date ? value : new Date(value);
  const seconds = Math.round((now - date.getTime()) / 1000);
  if (!Number.isFinite(seconds)) return '—';
  if (Math.abs(seconds) < 5) return 'just now';
  const units: [number, string][] = [
    [86400, 'd'],
    [3600, 'h'],
    [60, 'min'],
    [1, 's'],
  ];
  for (const [size, unit] of units) {
    if (Math.abs(seconds) >= size) {
      const count = Math.round(Math.abs(seconds) / size);
      return seconds >= 0 ? `${count} ${unit} ago` : `in ${count} ${unit}`;
    }
  }
  return 'just now';
}
