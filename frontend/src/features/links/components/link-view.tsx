/**
 * One link: its slices stacked by priority level with the residual capacity per level, the
 * delay-vs-capacity chart (Fig. 15) with the capacity marked, and a what-if panel whose
 * changes recompute the whole view at once (through the API's analytics; nothing is saved).
 */
import { useMemo, useState } from 'react';
import { Link } from 'react-router';

import { useAnalyzeBounds } from '@/api/analyze-bounds';
import { useCable } from '@/api/get-cable';
import { useLink } from '@/api/get-link';
import { useMinCapacity } from '@/api/get-min-capacity';
import { useSlices } from '@/api/get-slices';
import { useSwitch } from '@/api/get-switch';
import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { Card } from '@/components/ui/card';
import { Notice } from '@/components/ui/notice';
import { PageHeader } from '@/components/ui/page-header';
import { QueryErrorState, StateView } from '@/components/ui/states';
import { paths } from '@/config/paths';
import { DEFAULT_MODEL, FRAME_OVERHEADS, MODEL_LABELS, linkDocument, sliceDoc, sliceLevels, worstSlack } from '@/lib/analysis';
import type { LinkAnalysis } from '@/lib/api/schema';
import { formatDelay, formatRate } from '@/lib/format';
import { errorMessage } from '@/lib/problem';
import { useDebouncedValue } from '@/lib/use-debounced-value';
import { useStableValue } from '@/lib/use-stable-value';

import { DelayCapacityChart } from './delay-capacity-chart';
import { LinkForm } from './link-form';
import { PriorityStack } from './priority-stack';
import { WhatIfPanel, applyScenario, baseScenario, isBase, type Scenario } from './what-if-panel';

function frameOverheadLabel(bytes: number): string {
  return FRAME_OVERHEADS.find((o) => o.bytes === bytes)?.label ?? `${bytes} bytes of overhead per frame`;
}

export function LinkView({ linkId, canAct }: { linkId: number; canAct: boolean }) {
  const link = useLink(linkId);
  const slices = useSlices({ link_id: linkId });
  const sw = useSwitch(link.data?.switch_id);
  const cable = useCable(link.data?.cable_id);
  const farEnd = cable.data && link.data ? (cable.data.a_link_id === link.data.id ? { switchId: cable.data.b_switch_id, linkId: cable.data.b_link_id } : { switchId: cable.data.a_switch_id, linkId: cable.data.a_link_id }) : undefined;
  const farSwitch = useSwitch(farEnd?.switchId);
  const [scenario, setScenario] = useState<Scenario | null>(null);
  const [editing, setEditing] = useState(false);

  const baseDoc = useMemo(
    () => (link.data && slices.data ? linkDocument(link.data, slices.data.data.map(sliceDoc)) : null),
    [link.data, slices.data],
  );
  const capacity = link.data?.capacity_bps ?? 0;
  const current = scenario ?? baseScenario(capacity);
  const whatIf = scenario !== null && !isBase(scenario, capacity);
  const scenarioDoc = useStableValue(baseDoc ? applyScenario(baseDoc, current) : null);
  const doc = useDebouncedValue(scenarioDoc, 60);
  const model = link.data?.model ?? DEFAULT_MODEL;
  const harkous = useAnalyzeBounds(doc, 'harkous');
  const netcalc = useAnalyzeBounds(doc, 'netcalc');
  const governing = model === 'netcalc' ? netcalc : harkous;
  const baseline = useAnalyzeBounds(baseDoc, model);
  const minCapacity = useMinCapacity(doc, model);

  if (link.isError) return <QueryErrorState error={link.error} what={`link ${linkId}`} onRetry={() => void link.refetch()} />;
  if (slices.isError) return <QueryErrorState error={slices.error} what="the slices of this link" onRetry={() => void slices.refetch()} />;
  if (!link.data || !baseDoc || !doc) return <StateView kind="loading" title="Loading the link…" />;

  const l = link.data;
  const analysis: LinkAnalysis | undefined = governing.data;
  const slack = analysis ? worstSlack(analysis) : undefined;
  const byName = (a: LinkAnalysis | undefined) => new Map((a?.slices ?? []).map((b) => [b.name, b] as const));
  const hk = byName(harkous.data);
  const nc = byName(netcalc.data);
  const base = byName(baseline.data);
  const analysisError = harkous.error ?? netcalc.error;

  return (
    <div className="stack">
      <PageHeader
        breadcrumb={
          <>
            <Link to={paths.links.href()}>Links</Link> /{' '}
            {sw.data ? <Link to={paths.switch.href(sw.data.id)}>{sw.data.name}</Link> : `switch ${l.switch_id}`}
          </>
        }
        title={
          <>
            {l.name}{' '}
            {analysis &&
              (analysis.admissible ? <Badge tone="ok">{whatIf ? 'what-if admissible' : 'admissible'}</Badge> : <Badge tone="bad">{whatIf ? 'what-if not admissible' : 'not admissible'}</Badge>)}
          </>
        }
        description={`Port ${l.port} · ${l.queue_count} priority queues (${sliceLevels(l.queue_count)} for slices, one for best effort) · MTU ${l.mtu_bytes} bytes · capacity counts ${frameOverheadLabel(l.frame_overhead_bytes)} · admission by ${MODEL_LABELS[l.model]}${l.description ? ` · ${l.description}` : ''}`}
        actions={canAct && !editing && <Button onClick={() => setEditing(true)}>Edit link</Button>}
      />
      {editing && (
        <Card title={`Edit ${l.name}`}>
          <LinkForm link={l} onDone={() => setEditing(false)} onCancel={() => setEditing(false)} />
        </Card>
      )}
      {whatIf && (
        <Notice
          tone="warn"
          title="What-if view"
          actions={<Button size="sm" onClick={() => setScenario(null)}>Reset</Button>}
        >
          Numbers below show the link as the what-if panel changes it; nothing is saved.
        </Notice>
      )}
      <div className="stats">
        <div className="stat" data-testid="link-faces">
          <div className="stat-label">Faces</div>
          {l.cable_id === null ? (
            <>
              <div className="stat-value">hosts</div>
              <div className="stat-note">{[...l.host_ipv4_prefixes, ...l.host_vlan_ids.map((v) => `VLAN ${v}`)].join(', ') || 'none declared'}</div>
            </>
          ) : (
            <>
              <div className="stat-value">
                {farEnd ? <Link to={paths.switch.href(farEnd.switchId)}>{farSwitch.data?.name ?? `switch ${farEnd.switchId}`}</Link> : '…'}
              </div>
              <div className="stat-note">
                cable {cable.data?.name ?? l.cable_id}, {cable.data ? formatDelay(cable.data.propagation_s) : '…'} · back:{' '}
                {farEnd ? <Link to={paths.link.href(farEnd.linkId)}>link {farEnd.linkId}</Link> : '…'} ·{' '}
                <Link to={paths.topology.href()}>topology</Link>
              </div>
            </>
          )}
        </div>
        <div className="stat">
          <div className="stat-label">Capacity</div>
          <div className="stat-value">{formatRate(current.capacityBps)}</div>
          <div className="stat-note">{whatIf ? `now ${formatRate(capacity)}` : 'configured'}</div>
        </div>
        <div className="stat">
          <div className="stat-label">Utilisation by rate limits</div>
          <div className="stat-value">{analysis ? `${((analysis.total_rate_bps / current.capacityBps) * 100).toFixed(1)} %` : '…'}</div>
          <div className="stat-note">{analysis ? `${formatRate(analysis.total_rate_bps)} of rate limits` : ''}</div>
        </div>
        <div className="stat">
          <div className="stat-label">Worst slack</div>
          <div className={`stat-value ${slack === null || (slack ?? 0) < 0 ? 'bound-bad' : ''}`}>
            {slack === undefined ? '—' : slack === null ? 'unbounded' : formatDelay(slack)}
          </div>
          <div className="stat-note">{doc.slices.length} slices</div>
        </div>
        <div className="stat">
          <div className="stat-label">Minimum capacity</div>
          <div className="stat-value" data-testid="min-capacity">
            {doc.slices.length === 0 ? '—' : minCapacity.data ? (minCapacity.data.min_capacity_bps === null ? 'none' : formatRate(minCapacity.data.min_capacity_bps)) : '…'}
          </div>
          <div className="stat-note">for every slice to meet its target</div>
        </div>
      </div>
      <div className="split" style={{ gridTemplateColumns: 'minmax(0, 7fr) minmax(0, 4fr)' }}>
        <div className="stack">
          <Card title="Slices by priority level" subtitle="Residual capacity r and worst-case delay d per level (eqs. 2–4).">
            <PriorityStack doc={doc} capacityBps={current.capacityBps} analysis={analysis} />
          </Card>
          <Card title="Slices on this link">
            {analysisError ? (
              <Notice tone="bad" title="The analysis refused these numbers">{errorMessage(analysisError)}</Notice>
            ) : doc.slices.length === 0 ? (
              <StateView kind="empty" compact title="No slice crosses this link yet" />
            ) : (
              <div className="table-wrap">
                <table className="table" aria-label="Bounds on this link">
                  <thead>
                    <tr>
                      <th scope="col">Slice</th>
                      <th scope="col" className="num">P</th>
                      <th scope="col" className="num">Target</th>
                      <th scope="col" className="num">{MODEL_LABELS.netcalc}</th>
                      <th scope="col" className="num">{MODEL_LABELS.harkous}</th>
                      {whatIf && <th scope="col" className="num">Was</th>}
                    </tr>
                  </thead>
                  <tbody>
                    {doc.slices.map((s) => {
                      const stored = slices.data?.data.find((x) => x.name === s.name);
                      const g = (model === 'netcalc' ? nc : hk).get(s.name);
                      return (
                        <tr key={s.name} className={g && !g.meets_target ? 'row-bad' : ''}>
                          <td>{stored ? <Link to={paths.slice.href(stored.id)}>{s.name}</Link> : s.name}</td>
                          <td className="num">{s.priority}</td>
                          <td className="num">{formatDelay(s.delay_target_s)}</td>
                          <td className={`num ${nc.get(s.name)?.meets_target === false ? 'bound-bad' : ''}`}>{formatDelay(nc.get(s.name)?.worst_case_delay_s)}</td>
                          <td className={`num ${hk.get(s.name)?.meets_target === false ? 'bound-bad' : ''}`}>{formatDelay(hk.get(s.name)?.worst_case_delay_s)}</td>
                          {whatIf && <td className="num muted">{formatDelay(base.get(s.name)?.worst_case_delay_s)}</td>}
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              </div>
            )}
            <p className="muted small" style={{ marginTop: 8 }}>
              Network calculus: the sound bound, with one lower-priority frame of blocking (best effort's largest frame at least). Paper: the busy-period equations (1)–(4), shown beside it for comparison; they are not an upper bound. Red: above the target. This link's admission uses {MODEL_LABELS[model]}.
            </p>
          </Card>
          <Card title="Worst-case delay against capacity" subtitle="The paper's Fig. 15 for this link's slices.">
            <DelayCapacityChart
              doc={doc}
              capacityBps={capacity}
              {...(whatIf ? { whatIfCapacityBps: current.capacityBps } : {})}
              defaultModel={model}
            />
            {whatIf && analysis && current.capacityBps < analysis.total_rate_bps && (
              <p className="bound-bad small" style={{ marginTop: 6 }}>
                The what-if capacity {formatRate(current.capacityBps)} is below the sum of the rate limits ({formatRate(analysis.total_rate_bps)}): the lowest levels have no bound at any delay.
              </p>
            )}
          </Card>
        </div>
        <div className="stack">
          <Card title="What-if" subtitle="Recomputes as you move the controls.">
            <WhatIfPanel doc={baseDoc} capacityBps={capacity} scenario={current} onChange={setScenario} />
          </Card>
        </div>
      </div>
    </div>
  );
}
