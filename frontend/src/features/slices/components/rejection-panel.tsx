/**
 * A 409 admission rejection from the API: every violation with its reason (on one link, or
 * end to end, naming the worst hop), and the API's fixes (minimum capacity, priority plan),
 * each applicable with one click; applying one retries the submission.
 */
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { getSlicesQueryOptions } from '@/api/get-slices';
import { Button } from '@/components/ui/button';
import { Notice } from '@/components/ui/notice';
import { formatDelay, formatRate } from '@/lib/format';
import { errorMessage, type AdmissionFix, type ApiError } from '@/lib/problem';

import { applyPlanChanges, planChanges } from '../api/apply-priority-plan';
import { updateLinkCapacity } from '../api/update-link-capacity';

import { roundUpCapacity } from './slice-effects';

export function RejectionPanel({
  error,
  sliceName,
  excludeSliceId,
  canAct,
  onRetry,
}: {
  error: ApiError;
  /** The name of the slice being created or changed (the plans name it). */
  sliceName: string;
  excludeSliceId?: number;
  canAct: boolean;
  /** Submit again, with the priority a plan gave the slice. */
  onRetry: (change: { priority?: number }) => Promise<unknown>;
}) {
  const queryClient = useQueryClient();
  const [busy, setBusy] = useState<number | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const violations = error.problem.violations ?? [];
  const fixes = error.problem.fixes ?? [];

  async function apply(fix: AdmissionFix, index: number) {
    setBusy(index);
    setFailure(null);
    try {
      if (fix.kind === 'capacity') {
        await updateLinkCapacity(fix.link_id, roundUpCapacity(fix.capacity_bps));
        await queryClient.invalidateQueries({ queryKey: ['links'] });
        await onRetry({});
      } else {
        const stored = await queryClient.fetchQuery({
          ...getSlicesQueryOptions({ link_id: fix.link_id }),
          staleTime: 0,
        });
        const others = stored.data.filter((s) => s.id !== excludeSliceId);
        await applyPlanChanges(planChanges(fix.priorities, others));
        await queryClient.invalidateQueries({ queryKey: ['slices'] });
        const priority = fix.priorities[sliceName];
        await onRetry(priority === undefined ? {} : { priority });
      }
    } catch (cause) {
      setFailure(errorMessage(cause));
    } finally {
      setBusy(null);
    }
  }

  return (
    <div className="stack" style={{ gap: 10 }} data-testid="rejection">
      <Notice tone="bad" title={`Not admitted: ${error.problem.title}`}>
        {error.problem.detail}
      </Notice>
      {violations.length > 0 && (
        <div className="table-wrap">
          <table className="table" aria-label="Violations">
            <thead>
              <tr>
                <th scope="col">Link</th>
                <th scope="col">Slice</th>
                <th scope="col" className="num">Bound</th>
                <th scope="col" className="num">Target</th>
                <th scope="col">Reason</th>
              </tr>
            </thead>
            <tbody>
              {violations.map((v, index) => (
                <tr key={`${v.link_id}-${v.slice}-${index}`}>
                  <td>{v.link}</td>
                  <td>{v.slice}</td>
                  <td className="num bound-bad">{formatDelay(v.bound_s)}</td>
                  <td className="num">{formatDelay(v.target_s)}</td>
                  <td data-testid="violation-reason">{v.reason}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {fixes.length > 0 ? (
        <div className="fix-list" aria-label="Suggested fixes">
          {fixes.map((fix, index) => (
            <div className="fix" key={`${fix.kind}-${fix.link_id}-${index}`}>
              <div>
                <strong>{fix.kind === 'capacity' ? 'Raise capacity' : 'Priority plan'}</strong>{' '}
                {fix.kind === 'capacity' ? (
                  <span>
                    {fix.detail} ({formatRate(fix.capacity_bps)})
                  </span>
                ) : (
                  <span>
                    {fix.detail}:{' '}
                    {Object.entries(fix.priorities)
                      .sort((a, b) => b[1] - a[1])
                      .map(([name, priority]) => `${name} ${priority}`)
                      .join(', ')}
                  </span>
                )}
              </div>
              {canAct && (
                <Button
                  size="sm"
                  variant={fix.kind === 'priority-plan' ? 'primary' : 'secondary'}
                  busy={busy === index}
                  disabled={busy !== null && busy !== index}
                  onClick={() => void apply(fix, index)}
                >
                  {fix.kind === 'capacity'
                    ? `Raise to ${formatRate(roundUpCapacity(fix.capacity_bps))} and retry`
                    : 'Apply priority plan and retry'}
                </Button>
              )}
            </div>
          ))}
        </div>
      ) : (
        <p className="muted">
          The API found no fix: no capacity or priority plan admits the slices with these
          targets. Lower the rate or burst, or relax a target.
        </p>
      )}
      {failure && (
        <Notice tone="bad" title="The fix could not be applied">
          {failure}
        </Notice>
      )}
    </div>
  );
}
