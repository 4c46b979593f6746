/**
 * Every slice of the report: its end-to-end bound as admission checks it (each hop under its
 * link's model) and under each model against its end-to-end target (and the hop that weighs
 * most), then how much more it could send and what it was measured to do against what it
 * declared.
 */
import { Link } from 'react-router';

import { paths } from '@/config/paths';
import { MODEL_LABELS, MODELS } from '@/lib/analysis';
import type { EndToEnd, Measured, SliceReport } from '@/lib/api/schema';
import { formatBytes, formatDelay, formatPercent, formatRate } from '@/lib/format';

import { formatRatio, formatSlack, MODEL_SHORT } from './report-format';

function SliceLink({ slice }: { slice: SliceReport }) {
  return <Link to={paths.slice.href(slice.id)}>{slice.name}</Link>;
}

const ENFORCED = "Admission (each link's model)";

/** Bound and slack cells of one end-to-end figure, red when it misses its target. */
function endToEndCells(key: string, e: EndToEnd) {
  const tone = e.meets_target ? '' : 'bound-bad';
  return [
    <td key={`${key}-bound`} className={`num group-start ${tone}`}>
      {formatDelay(e.total_s)}
      {!e.meets_target && <span className="visually-hidden"> (misses its target)</span>}
    </td>,
    <td key={`${key}-slack`} className={`num ${tone}`}>{formatSlack(e.slack_s)}</td>,
  ];
}

export function EndToEndTable({ slices }: { slices: SliceReport[] }) {
  return (
    <div className="table-wrap">
      <table className="table report-table" aria-label="End-to-end bounds">
        <thead>
          <tr>
            <th scope="col" rowSpan={2}>Slice</th>
            <th scope="col" rowSpan={2} className="num">P</th>
            <th scope="col" rowSpan={2}>Links</th>
            <th scope="col" rowSpan={2} className="num">E2E target</th>
            {[ENFORCED, ...MODELS.map((m) => MODEL_LABELS[m])].map((label) => (
              <th key={label} scope="colgroup" colSpan={2} className="num group-start">{label}</th>
            ))}
            <th scope="col" rowSpan={2} className="group-start">Worst hop</th>
          </tr>
          <tr>
            {['enforced', ...MODELS].map((key) => [
              <th key={`${key}-bound`} scope="col" className="num group-start">Bound</th>,
              <th key={`${key}-slack`} scope="col" className="num">Slack</th>,
            ])}
          </tr>
        </thead>
        <tbody>
          {slices.map((s) => {
            const hops = MODELS.filter((m) => s.e2e[m].worst_hop !== s.e2e_enforced.worst_hop);
            return (
              <tr key={s.id} className={s.e2e_enforced.meets_target ? '' : 'row-bad'}>
                <td><SliceLink slice={s} /></td>
                <td className="num">{s.priority}</td>
                <td className="small">{s.links.length ? s.links.join(', ') : '—'}</td>
                <td className="num">{s.e2e_enforced.target_s === null ? '—' : formatDelay(s.e2e_enforced.target_s)}</td>
                {endToEndCells('enforced', s.e2e_enforced)}
                {MODELS.map((m) => endToEndCells(m, s.e2e[m]))}
                <td className="small group-start">
                  {s.e2e_enforced.worst_hop ?? '—'}
                  {hops.map((m) => (
                    <div key={m} className="muted">
                      {MODEL_SHORT[m]}: {s.e2e[m].worst_hop ?? '—'}
                    </div>
                  ))}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** A percentile is the upper edge of its histogram bucket: the delay is at most that. */
function atMost(seconds: number | null): string {
  return seconds === null ? '—' : `≤ ${formatDelay(seconds)}`;
}

function MeasuredCells({ measured, telemetry }: { measured: Measured | null; telemetry: boolean }) {
  if (!measured) {
    return (
      <td colSpan={4} className="muted small">
        {telemetry ? 'no samples in the window' : 'telemetry not used'}
      </td>
    );
  }
  const overRate = measured.peak_rate_vs_declared > 1;
  const overBound = (measured.delay_max_vs_bound ?? 0) > 1;
  return (
    <>
      <td className={`num ${overRate ? 'bound-bad' : ''}`}>
        {formatRate(measured.peak_rate_bps)}
        <div className="muted small">{formatRatio(measured.peak_rate_vs_declared)} declared · mean {formatRate(measured.mean_rate_bps)}</div>
      </td>
      <td className="num">
        {atMost(measured.delay_p99_s)}
        <div className="muted small">p50 {atMost(measured.delay_p50_s)} · p95 {atMost(measured.delay_p95_s)}</div>
      </td>
      <td className={`num ${overBound ? 'bound-bad' : ''}`}>
        {measured.delay_max_s === null ? '—' : `≥ ${formatDelay(measured.delay_max_s)}`}
        <div className="muted small">{formatRatio(measured.delay_max_vs_bound)} bound</div>
      </td>
      <td className="num">{formatPercent(measured.loss_ratio)}</td>
    </>
  );
}

export function HeadroomTable({ slices, telemetry }: { slices: SliceReport[]; telemetry: boolean }) {
  return (
    <div className="table-wrap">
      <table className="table report-table" aria-label="Headroom and measurements">
        <thead>
          <tr>
            <th scope="col" rowSpan={2}>Slice</th>
            <th scope="col" rowSpan={2} className="num">Rate</th>
            <th scope="col" rowSpan={2} className="num">Burst</th>
            <th scope="colgroup" colSpan={2} className="group-start">Headroom</th>
            <th scope="colgroup" colSpan={4} className="group-start">Measured</th>
          </tr>
          <tr>
            <th scope="col" className="group-start">Extra rate</th>
            <th scope="col">Extra burst</th>
            <th scope="col" className="num group-start">Peak rate</th>
            <th scope="col" className="num">Delay p99</th>
            <th scope="col" className="num">Delay max</th>
            <th scope="col" className="num">Loss</th>
          </tr>
        </thead>
        <tbody>
          {slices.map((s) => (
            <tr key={s.id}>
              <td><SliceLink slice={s} /></td>
              <td className="num">{formatRate(s.rate_bps)}</td>
              <td className="num">
                {formatBytes(s.burst_bytes)}
                <div className="muted small">{formatDelay(s.burst_limit_s)} at rate</div>
              </td>
              <td className="group-start">
                <Headroom value={s.headroom.rate_bps === null ? null : `+${formatRate(s.headroom.rate_bps)}`} limitedBy={s.headroom.rate_limited_by} />
              </td>
              <td>
                <Headroom value={s.headroom.burst_bytes === null ? null : `+${formatBytes(s.headroom.burst_bytes)}`} limitedBy={s.headroom.burst_limited_by} />
              </td>
              <MeasuredCells measured={s.measured} telemetry={telemetry} />
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Headroom({ value, limitedBy }: { value: string | null; limitedBy: string | null }) {
  if (value === null) return <span className="bound-bad" title="Its links do not admit their slices today">— none today</span>;
  return (
    <>
      <span className="bound">{value}</span>
      {limitedBy && <div className="muted small">limited by {limitedBy}</div>}
    </>
  );
}
