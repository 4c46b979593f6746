import { Link } from 'react-router';

import { useLinks } from '@/api/get-links';
import { Card } from '@/components/ui/card';
import { paths } from '@/config/paths';
import type { SlicePublic } from '@/lib/api/schema';
import { formatDelay, formatPercent, formatRate } from '@/lib/format';

import { BoundCell, SlackCell } from './bound-cell';
import { SliceHealthBadge } from './slice-health';
import { SliceStateBadge } from './slice-state-badge';
import type { SliceHealth } from './use-slice-bounds';

/** The slice's contract, match, SLA, DP_SIDs and its analytical bound on each link. */
export function SliceSummary({ slice, health }: { slice: SlicePublic; health: SliceHealth | undefined }) {
  const links = useLinks();
  const linkName = new Map((links.data?.data ?? []).map((l) => [l.id, l] as const));
  const hops = slice.path ?? slice.link_ids;
  return (
    <div className="grid-2">
      <Card title="Contract" actions={<SliceStateBadge state={slice.state} />}>
        <dl className="kv">
          <dt>Rate limit</dt>
          <dd>{formatRate(slice.rate_bps)}</dd>
          <dt>Burst</dt>
          <dd>
            {formatDelay(slice.burst_limit_s)} ({Math.round(slice.burst_bytes).toLocaleString('en-US')} bytes)
          </dd>
          <dt>Delay target</dt>
          <dd>{formatDelay(slice.delay_target_s)} per link</dd>
          <dt>End-to-end target</dt>
          <dd>{slice.e2e_delay_target_s === null ? 'none' : formatDelay(slice.e2e_delay_target_s)}</dd>
          <dt>Priority</dt>
          <dd>{slice.priority}</dd>
          <dt>Queue scheme</dt>
          <dd>{describeScheme(slice)}</dd>
          <dt>Match</dt>
          <dd>
            {[slice.vlan_id !== null ? `VLAN ${slice.vlan_id}` : null, ...slice.ipv4_prefixes]
              .filter(Boolean)
              .join(', ')}
          </dd>
          <dt>Path</dt>
          <dd>
            {slice.path === null
              ? 'an unordered set of links (no path given)'
              : slice.path.map((id) => linkName.get(id)?.name ?? `link ${id}`).join(' → ')}
          </dd>
          <dt>DP_SID</dt>
          <dd>{slice.dp_sids.map((d) => `${d.dp_sid} on switch ${d.switch_id}`).join(', ') || '—'}</dd>
          <dt>SLA</dt>
          <dd>
            {[
              slice.sla.max_delay_s != null && `delay ≤ ${formatDelay(slice.sla.max_delay_s)}`,
              slice.sla.min_throughput_bps != null && `throughput ≥ ${formatRate(slice.sla.min_throughput_bps)}`,
              slice.sla.max_loss_ratio != null && `loss ≤ ${formatPercent(slice.sla.max_loss_ratio)}`,
              slice.sla.max_mark_ratio != null && `marks ≤ ${formatPercent(slice.sla.max_mark_ratio)}`,
            ]
              .filter(Boolean)
              .join(' · ') || 'no SLA targets'}
          </dd>
        </dl>
        {slice.description && <p className="muted" style={{ marginTop: 10 }}>{slice.description}</p>}
      </Card>
      <Card title="Worst-case delay on each link" actions={health && <SliceHealthBadge health={health} />}>
        <table className="table" aria-label="Bounds per link">
          <thead>
            <tr>
              <th scope="col">Link</th>
              <th scope="col" className="num">Capacity</th>
              <th scope="col" className="num">Bound</th>
              <th scope="col" className="num">Slack</th>
            </tr>
          </thead>
          <tbody>
            {hops.map((id) => {
              const bound = health?.perLink.get(id);
              const link = linkName.get(id);
              return (
                <tr key={id}>
                  <td>
                    <Link to={paths.link.href(id)}>{link?.name ?? `link ${id}`}</Link>
                  </td>
                  <td className="num">{formatRate(link?.capacity_bps)}</td>
                  <td className="num">
                    <BoundCell bound={bound?.worst_case_delay_s} target={slice.delay_target_s} meets={bound?.meets_target} />
                  </td>
                  <td className="num">
                    <SlackCell slack={bound?.slack_s} meets={bound?.meets_target} />
                  </td>
                </tr>
              );
            })}
          </tbody>
          <tfoot>
            <EndToEndRow total={health?.totalBoundS} target={slice.e2e_delay_target_s} />
          </tfoot>
        </table>
        <p className="muted small" style={{ marginTop: 8 }}>
          Under each link's model, in path order; the link view compares both models. End to end here
          is the sum of the bounds on every link; admission adds the cables' propagation delays.
        </p>
      </Card>
    </div>
  );
}

/** The sum of the per-link bounds, against the end-to-end target when the slice has one. */
function EndToEndRow({ total, target }: { total: number | null | undefined; target: number | null }) {
  const meets = total === undefined || target === null ? undefined : total !== null && total <= target;
  const slack = total === undefined || target === null ? undefined : total === null ? null : target - total;
  return (
    <tr>
      <th scope="row">End to end</th>
      <td className="num">{target === null ? 'no target' : `target ${formatDelay(target)}`}</td>
      <td className="num">
        <BoundCell bound={total} target={target ?? Infinity} meets={meets} />
      </td>
      <td className="num">{target === null ? '—' : <SlackCell slack={slack} meets={meets} />}</td>
    </tr>
  );
}

/** The queue scheme with its parameters, in words. */
function describeScheme(slice: SlicePublic): string {
  switch (slice.scheme) {
    case 'ecn_step':
      return `ECN step marking at ${formatDelay(slice.marking_threshold_s)}`;
    case 'meter':
      return 'P4 meter baseline (rate and burst only, no delay control)';
    case 'codel': {
      if (!slice.codel) return 'CoDel';
      const { target_s, interval_s, ecn_mark } = slice.codel;
      const signal = ecn_mark ? 'marks ECN-capable packets, drops others' : 'drops';
      return `CoDel: target ${formatDelay(target_s)}, interval ${formatDelay(interval_s)}; ${signal} once the delay stays above the target for an interval`;
    }
    case 'abc': {
      if (!slice.abc) return 'ABC';
      const { meter_memory_s, average_memory_s, reference_rate_bps, q_min_s, q_base_s, gamma_s } = slice.abc;
      const per = slice.abc.key === 'source_prefix' ? `source /${slice.abc.prefix_length}` : 'source address';
      return (
        `ABC per ${per}: drops at ${formatDelay(q_base_s)} of queue for average activity, ` +
        `${formatDelay(gamma_s)} less per unit of activity above it, never below ${formatDelay(q_min_s)}; ` +
        `rates metered over ${formatDelay(meter_memory_s)}, averaged over ${formatDelay(average_memory_s)}, ` +
        `activity 0 at ${formatRate(reference_rate_bps)}`
      );
    }
    case 'tail_drop':
      return 'Tail drop';
  }
}
