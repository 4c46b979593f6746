/**
 * One link of the report: capacity, model, queues, utilisation, admissibility per model, the
 * per-slice bounds, the minimum capacities (Table III), margin and growth, and the delay
 * against capacity under each model.
 */
import { Link } from 'react-router';

import { Badge } from '@/components/ui/badge';
import { Card } from '@/components/ui/card';
import { Meter } from '@/components/ui/meter';
import { StateView } from '@/components/ui/states';
import { paths } from '@/config/paths';
import { MODEL_LABELS, MODELS } from '@/lib/analysis';
import type { LinkReport, Parameters } from '@/lib/api/schema';
import { formatPercent, formatRate } from '@/lib/format';

import { LinkSlicesTable } from './link-slices-table';
import { MinCapacityTable } from './min-capacity-table';
import { ReportDelayChart } from './report-delay-chart';
import { formatGrowthFactor, formatMargin, formatMonthsLeft, MODEL_SHORT } from './report-format';

export function LinkReportCard({ link, parameters }: { link: LinkReport; parameters: Parameters }) {
  const { growth } = link;
  const empty = link.slices.length === 0;
  return (
    <Card
      className="report-link"
      id={`report-link-${link.id}`}
      title={<Link to={paths.link.href(link.id)}>{link.name}</Link>}
      subtitle={`${formatRate(link.capacity_bps)} · ${link.queue_count} priority queues · MTU ${link.mtu_bytes} bytes · admission by ${MODEL_LABELS[link.model]}`}
      actions={MODELS.map((m) => (
        <Badge key={m} tone={link.admissible[m] ? 'ok' : 'bad'} title={MODEL_LABELS[m]}>
          {MODEL_SHORT[m]}: {link.admissible[m] ? 'admissible' : 'not admissible'}
        </Badge>
      ))}
    >
      <div className="stack">
        <dl className="report-facts">
          <div>
            <dt>Utilisation by rate limits</dt>
            <dd>
              <div className="meter-cell">
                <Meter value={link.utilisation} label={`Utilisation of ${link.name}`} />
                <span>{formatPercent(link.utilisation)}</span>
              </div>
              <span className="muted small">{formatRate(link.total_rate_bps)} of {formatRate(link.capacity_bps)}</span>
            </dd>
          </div>
          <div>
            <dt>Capacity margin</dt>
            <dd className={link.capacity_margin_bps === null || link.capacity_margin_bps < 0 ? 'bound-bad' : ''}>
              {formatMargin(link.capacity_margin_bps)}
              <span className="muted small"> {link.capacity_margin_bps === null ? 'no capacity works' : link.capacity_margin_bps < 0 ? 'short' : 'spare'}</span>
            </dd>
          </div>
          <div>
            <dt>Inadmissible at +{parameters.growth_percent_per_month} %/month</dt>
            <dd className={growth.months_until_inadmissible === null ? '' : 'bound-bad'}>
              {formatMonthsLeft(growth.months_until_inadmissible, parameters.horizon_months)}
            </dd>
          </div>
          <div>
            <dt>Rates may grow by</dt>
            <dd>{formatGrowthFactor(growth.rate_factor_limit)}</dd>
          </div>
          <div>
            <dt>Capacity needed in {parameters.horizon_months} months</dt>
            <dd className={growth.capacity_at_horizon_bps === null || growth.capacity_at_horizon_bps > link.capacity_bps ? 'bound-bad' : ''}>
              {formatRate(growth.capacity_at_horizon_bps)}
            </dd>
          </div>
        </dl>
        {empty ? (
          <StateView kind="empty" compact title="No slice crosses this link" detail="Its whole capacity is free; bounds, minimum capacities and curves appear once a slice uses it." />
        ) : (
          <>
            <section className="report-block" aria-label={`Per-hop bounds on ${link.name}`}>
              <h3>Per-hop bounds</h3>
              <LinkSlicesTable link={link} />
              <p className="muted small">Red: the bound misses the slice&apos;s per-hop target (slack below zero). &quot;unbounded&quot;: the level&apos;s residual capacity is gone.</p>
            </section>
            <section className="report-block" aria-label={`Minimum capacity of ${link.name}`}>
              <h3>Minimum capacity</h3>
              <MinCapacityTable link={link} />
              <p className="muted small">Red: more than the link&apos;s {formatRate(link.capacity_bps)}; — : no capacity up to 1 Pbit/s works.</p>
            </section>
            <section className="report-block report-charts" aria-label={`Delay against capacity on ${link.name}`}>
              <h3>Delay against capacity</h3>
              <div className="grid-2">
                {MODELS.map((m) => (
                  <ReportDelayChart key={m} link={link} model={m} />
                ))}
              </div>
            </section>
          </>
        )}
      </div>
    </Card>
  );
}
