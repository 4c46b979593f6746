/** Every slice on one link: its per-hop bound and slack under both models against its target. */
import { Link } from 'react-router';

import { paths } from '@/config/paths';
import { MODEL_LABELS, MODELS } from '@/lib/analysis';
import type { LinkReport } from '@/lib/api/schema';
import { formatBytes, formatDelay, formatRate } from '@/lib/format';

import { formatSlack } from './report-format';

export function LinkSlicesTable({ link }: { link: LinkReport }) {
  return (
    <div className="table-wrap">
      <table className="table report-table" aria-label={`Slices on ${link.name}`}>
        <thead>
          <tr>
            <th scope="col" rowSpan={2}>Slice</th>
            <th scope="col" rowSpan={2} className="num">P</th>
            <th scope="col" rowSpan={2} className="num">Rate</th>
            <th scope="col" rowSpan={2} className="num">Burst</th>
            <th scope="col" rowSpan={2} className="num">Target</th>
            {MODELS.map((m) => (
              <th key={m} scope="colgroup" colSpan={2} className="num group-start">
                {MODEL_LABELS[m]}
                {m === link.model ? ' (enforced)' : ''}
              </th>
            ))}
          </tr>
          <tr>
            {MODELS.map((m) => [
              <th key={`${m}-bound`} scope="col" className="num group-start">Bound</th>,
              <th key={`${m}-slack`} scope="col" className="num">Slack</th>,
            ])}
          </tr>
        </thead>
        <tbody>
          {link.slices.map((s) => (
            <tr key={s.slice_id} className={s.meets_target[link.model] ? '' : 'row-bad'}>
              <td>
                <Link to={paths.slice.href(s.slice_id)}>{s.name}</Link>
              </td>
              <td className="num">{s.priority}</td>
              <td className="num">{formatRate(s.rate_bps)}</td>
              <td className="num">{formatBytes(s.burst_bytes)}</td>
              <td className="num">{formatDelay(s.delay_target_s)}</td>
              {MODELS.map((m) => {
                const tone = s.meets_target[m] ? '' : 'bound-bad';
                return [
                  <td key={`${m}-bound`} className={`num group-start ${tone}`}>
                    {formatDelay(s.bound_s[m])}
                    {!s.meets_target[m] && <span className="visually-hidden"> (misses its target)</span>}
                  </td>,
                  <td key={`${m}-slack`} className={`num ${tone}`}>{formatSlack(s.slack_s[m])}</td>,
                ];
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
