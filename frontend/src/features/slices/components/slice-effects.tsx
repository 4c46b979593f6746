/**
 * While the operator types: the effect of the slice on every link it crosses, computed by
 * the API's analytics. Each slice's worst-case delay under both models against its target
 * (network calculus, the sound bound, first; the paper's eq. 3 beside it),
 * the slack, and when the slice does not fit: why, the minimum capacity and a priority plan
 * that would admit it, applicable with one click.
 */
import { useMemo } from 'react';

import { useAnalyzeBounds } from '@/api/analyze-bounds';
import { useLink } from '@/api/get-link';
import { useMinCapacity } from '@/api/get-min-capacity';
import { usePriorityPlan } from '@/api/get-priority-plan';
import { useSlices } from '@/api/get-slices';
import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { Notice } from '@/components/ui/notice';
import { QueryErrorState, StateView } from '@/components/ui/states';
import { DEFAULT_MODEL, MODEL_HINTS, MODEL_LABELS, linkDocument, rateAtOrAbove, sliceDoc, sliceLevels, violationReason } from '@/lib/analysis';
import type { LinkAnalysis, SliceDocument } from '@/lib/api/schema';
import { formatDelay, formatRate } from '@/lib/format';
import { errorMessage } from '@/lib/problem';

import { planChanges, useApplyPlanChanges } from '../api/apply-priority-plan';
import { useUpdateLinkCapacity } from '../api/update-link-capacity';

import { BoundCell, SlackCell } from './bound-cell';

/** Capacities are applied rounded up to 0.1 Mbit/s, so the bound is met with a margin. */
export function roundUpCapacity(bps: number): number {
  return Math.ceil(bps / 1e5) * 1e5;
}

export function SliceEffects({
  candidate,
  linkIds,
  excludeSliceId,
  canAct,
  onUsePriority,
}: {
  /** The slice as typed so far; null while its numbers are not valid yet. */
  candidate: SliceDocument | null;
  linkIds: number[];
  excludeSliceId?: number;
  canAct: boolean;
  onUsePriority: (priority: number) => void;
}) {
  if (linkIds.length === 0) {
    return (
      <StateView
        kind="empty"
        compact
        title="Choose the links the slice crosses"
        detail="Its effect on every link appears here as you type."
      />
    );
  }
  if (candidate === null) {
    return (
      <StateView
        kind="empty"
        compact
        title="Enter a rate, a burst limit and a priority"
        detail="The worst-case delays on each link appear as soon as they are valid numbers."
      />
    );
  }
  return (
    <div data-testid="slice-effects">
      {linkIds.map((linkId) => (
        <LinkEffect
          key={linkId}
          linkId={linkId}
          candidate={candidate}
          {...(excludeSliceId !== undefined ? { excludeSliceId } : {})}
          canAct={canAct}
          onUsePriority={onUsePriority}
        />
      ))}
    </div>
  );
}

function LinkEffect({
  linkId,
  candidate,
  excludeSliceId,
  canAct,
  onUsePriority,
}: {
  linkId: number;
  candidate: SliceDocument;
  excludeSliceId?: number;
  canAct: boolean;
  onUsePriority: (priority: number) => void;
}) {
  const link = useLink(linkId);
  const stored = useSlices({ link_id: linkId });
  const others = useMemo(
    () => (stored.data?.data ?? []).filter((s) => s.id !== excludeSliceId),
    [stored.data, excludeSliceId],
  );
  const previewName = useMemo(() => {
    const taken = new Set(others.map((s) => s.name));
    let name = candidate.name;
    while (taken.has(name)) name = `${name} (new)`;
    return name;
  }, [others, candidate.name]);
  const doc = useMemo(() => {
    if (!link.data || !stored.data) return null;
    return linkDocument(link.data, [...others.map(sliceDoc), { ...candidate, name: previewName }]);
  }, [link.data, stored.data, others, candidate, previewName]);

  const harkous = useAnalyzeBounds(doc, 'harkous');
  const netcalc = useAnalyzeBounds(doc, 'netcalc');
  const model = link.data?.model ?? DEFAULT_MODEL;
  const governing = model === 'netcalc' ? netcalc : harkous;
  const rejected = governing.data !== undefined && !governing.data.admissible;
  const ratesFit =
    doc !== null && link.data !== undefined && rateAtOrAbove(doc.slices, 0) <= link.data.capacity_bps;
  const minCapacity = useMinCapacity(rejected ? doc : null, model);
  const plan = usePriorityPlan(rejected && ratesFit ? doc : null, model, sliceLevels(link.data?.queue_count ?? 8));
  const applyPlan = useApplyPlanChanges();
  const raiseCapacity = useUpdateLinkCapacity();

  if (link.isError) return <QueryErrorState compact error={link.error} what={`link ${linkId}`} />;
  if (stored.isError) return <QueryErrorState compact error={stored.error} what="the slices on the link" />;
  if (!link.data || !doc) {
    return <StateView kind="loading" compact title={`Loading link ${linkId}…`} />;
  }
  const analysisError = harkous.error ?? netcalc.error;
  const byName = (analysis: LinkAnalysis | undefined) =>
    new Map((analysis?.slices ?? []).map((b) => [b.name, b] as const));
  const hk = byName(harkous.data);
  const nc = byName(netcalc.data);
  const gov = model === 'netcalc' ? nc : hk;
  const capacity = link.data.capacity_bps;
  const planData = plan.data;
  const changes = planData?.feasible ? planChanges(planData.priorities, others) : [];
  const plannedPriority = planData?.feasible ? planData.priorities[previewName] : undefined;

  return (
    <section className="effects-link" aria-label={`Effect on link ${link.data.name}`}>
      <div className="row" style={{ justifyContent: 'space-between' }}>
        <h3>
          {link.data.name}{' '}
          <span className="muted small">
            {formatRate(capacity)} · {link.data.queue_count} queues (one for best effort) · governed by{' '}
            {MODEL_LABELS[model]}
          </span>
        </h3>
        {governing.data === undefined ? (
          <Badge>checking…</Badge>
        ) : governing.data.admissible ? (
          <Badge tone="ok">fits</Badge>
        ) : (
          <Badge tone="bad">does not fit</Badge>
        )}
      </div>
      {analysisError ? (
        <Notice tone="bad" title="The analysis refused these numbers">
          {errorMessage(analysisError)}
        </Notice>
      ) : (
        <div className="table-wrap">
          <table className="table" aria-label={`Worst-case delays on ${link.data.name}`}>
            <thead>
              <tr>
                <th scope="col">Slice</th>
                <th scope="col" className="num">Prio</th>
                <th scope="col" className="num">Target</th>
                <th scope="col" className="num" title={`Worst-case delay, ${MODEL_HINTS.netcalc}`}>
                  {MODEL_LABELS.netcalc}
                </th>
                <th scope="col" className="num" title={`Worst-case delay, ${MODEL_HINTS.harkous}`}>
                  {MODEL_LABELS.harkous}
                </th>
                <th scope="col" className="num">Slack</th>
              </tr>
            </thead>
            <tbody>
              {doc.slices.map((s) => {
                const h = hk.get(s.name);
                const n = nc.get(s.name);
                const g = gov.get(s.name);
                const isNew = s.name === previewName;
                const target = s.delay_target_s ?? 0;
                return (
                  <tr key={s.name} className={isNew ? 'row-new' : g && !g.meets_target ? 'row-bad' : ''}>
                    <td>
                      {isNew ? <strong>{s.name}</strong> : s.name}
                      {isNew && <span className="muted small"> (this slice)</span>}
                    </td>
                    <td className="num">{s.priority}</td>
                    <td className="num">{formatDelay(target)}</td>
                    <td className="num">
                      <BoundCell bound={n?.worst_case_delay_s} target={target} meets={n?.meets_target} />
                    </td>
                    <td className="num">
                      <BoundCell bound={h?.worst_case_delay_s} target={target} meets={h?.meets_target} />
                    </td>
                    <td className="num">
                      <SlackCell slack={g?.slack_s} meets={g?.meets_target} />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <p className="muted small" style={{ marginTop: 4 }}>
            Network calculus is the sound bound; the paper's eq. 3 is shown beside it but is not an upper bound. Slack under the link's model.
          </p>
        </div>
      )}
      {rejected && governing.data && (
        <div className="stack" style={{ gap: 8, marginTop: 10 }}>
          <Notice tone="bad" title="Why it does not fit">
            <ul style={{ margin: 0, paddingLeft: 18 }}>
              {governing.data.slices
                .filter((b) => !b.meets_target)
                .map((b) => (
                  <li key={b.name}>
                    <strong>{b.name}</strong>: {violationReason(b, doc, capacity)}
                  </li>
                ))}
            </ul>
          </Notice>
          <div className="fix-list">
            <div className="fix">
              <div>
                <strong>Minimum capacity</strong>{' '}
                {minCapacity.isPending ? (
                  <span className="muted">computing…</span>
                ) : minCapacity.data?.min_capacity_bps == null ? (
                  <span>no capacity admits these slices (a target is below what any rate can give)</span>
                ) : (
                  <span>
                    {formatRate(minCapacity.data.min_capacity_bps)} (now {formatRate(capacity)})
                  </span>
                )}
              </div>
              {canAct && minCapacity.data?.min_capacity_bps != null && (
                <Button
                  size="sm"
                  busy={raiseCapacity.isPending}
                  onClick={() => {
                    const bps = minCapacity.data?.min_capacity_bps;
                    if (bps != null) raiseCapacity.mutate({ linkId, capacityBps: roundUpCapacity(bps) });
                  }}
                >
                  Raise link to {formatRate(roundUpCapacity(minCapacity.data.min_capacity_bps))}
                </Button>
              )}
            </div>
            <div className="fix">
              <div>
                <strong>Priority plan</strong>{' '}
                {!ratesFit ? (
                  <span>none: the rate limits exceed the capacity at any priority</span>
                ) : plan.isPending ? (
                  <span className="muted">searching…</span>
                ) : plan.isError ? (
                  <span>{errorMessage(plan.error)}</span>
                ) : planData?.feasible ? (
                  <span data-testid="preview-plan">
                    {changes.map((c) => `${c.name} ${c.from} → ${c.to}`).join(', ')}
                    {changes.length > 0 && plannedPriority !== undefined ? ', ' : ''}
                    {plannedPriority !== undefined && `this slice → ${plannedPriority}`}
                  </span>
                ) : (
                  <span>{planData?.reason ?? 'none found'}</span>
                )}
              </div>
              {canAct && planData?.feasible && plannedPriority !== undefined && (
                <Button
                  size="sm"
                  variant="primary"
                  busy={applyPlan.isPending}
                  onClick={() =>
                    applyPlan.mutate(changes, { onSuccess: () => onUsePriority(plannedPriority) })
                  }
                >
                  {changes.length ? 'Apply plan' : `Use priority ${plannedPriority}`}
                </Button>
              )}
            </div>
          </div>
          {(applyPlan.error || raiseCapacity.error) && (
            <Notice tone="bad" title="The fix could not be applied">
              {errorMessage(applyPlan.error ?? raiseCapacity.error)}
            </Notice>
          )}
        </div>
      )}
      {!rejected && governing.data && (
        <p className="muted small" style={{ marginTop: 6 }}>
          Utilisation by rate limits {((governing.data.total_rate_bps / capacity) * 100).toFixed(1)} %.
        </p>
      )}
    </section>
  );
}

