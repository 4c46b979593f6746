/**
 * The paper's Table III for one link: the least capacity with the priorities as they are, with
 * every slice at one level, and with the best plan the planner finds, under both models.
 */
import { MODEL_LABELS, MODELS } from '@/lib/analysis';
import type { LinkReport } from '@/lib/api/schema';
import { formatRate } from '@/lib/format';

import { formatPlan } from './report-format';

export function MinCapacityTable({ link }: { link: LinkReport }) {
  const { current, one_level: oneLevel, best_plan: best } = link.min_capacity_bps;
  // Red: more than the link has (or no capacity works).
  const cell = (model: string, bps: number | null) => (
    <td key={model} className={`num ${bps === null || bps > link.capacity_bps ? 'bound-bad' : ''}`}>
      {formatRate(bps)}
    </td>
  );
  return (
    <div className="table-wrap">
      <table className="table report-table" aria-label={`Minimum capacity of ${link.name}`}>
        <thead>
          <tr>
            <th scope="col">Priorities</th>
            {MODELS.map((m) => (
              <th key={m} scope="col" className="num">{MODEL_LABELS[m]}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          <tr>
            <th scope="row">As they are</th>
            {MODELS.map((m) => cell(m, current[m]))}
          </tr>
          <tr>
            <th scope="row">All at one level</th>
            {MODELS.map((m) => cell(m, oneLevel[m]))}
          </tr>
          <tr>
            <th scope="row">Best plan ({link.queue_count} queues)</th>
            {MODELS.map((m) => cell(m, best[m].capacity_bps))}
          </tr>
          <tr>
            <th scope="row">Best plan&apos;s priorities</th>
            {MODELS.map((m) => (
              <td key={m} className="num small">
                {formatPlan(best[m].priorities)}
                {best[m].priorities && (
                  <div className="muted">{best[m].exhaustive ? 'proven least capacity' : 'best found (search not exhaustive)'}</div>
                )}
              </td>
            ))}
          </tr>
        </tbody>
      </table>
    </div>
  );
}

