import { useState } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';

import { useSlice } from '@/api/get-slice';
import { Button } from '@/components/ui/button';
import { Notice } from '@/components/ui/notice';
import { PageHeader } from '@/components/ui/page-header';
import { QueryErrorState, StateView } from '@/components/ui/states';
import { paths } from '@/config/paths';
import { LiveSliceView } from '@/features/live/components/live-slice-view';
import { useDeleteSlice } from '@/features/slices/api/delete-slice';
import { SliceStateBadge } from '@/features/slices/components/slice-state-badge';
import { SliceSummary } from '@/features/slices/components/slice-summary';
import { useSliceBounds } from '@/features/slices/components/use-slice-bounds';
import { useAuthorization } from '@/lib/auth';
import { ApiError, errorMessage } from '@/lib/problem';

import { NotFoundRoute } from './not-found';
import { useIdParam } from './use-id-param';

export function SliceRoute() {
  const id = useIdParam('sliceId');
  if (id === null) return <NotFoundRoute what="This slice" />;
  return <SliceDetail id={id} />;
}

function SliceDetail({ id }: { id: number }) {
  const slice = useSlice(id);
  const health = useSliceBounds(slice.data);
  const { can } = useAuthorization();
  const navigate = useNavigate();
  const location = useLocation();
  const [confirming, setConfirming] = useState(false);
  const remove = useDeleteSlice();
  const admitted = (location.state as { admitted?: boolean } | null)?.admitted === true;

  if (slice.isError) {
    if (slice.error instanceof ApiError && slice.error.status === 404) return <NotFoundRoute what={`Slice ${id}`} />;
    return <QueryErrorState error={slice.error} what="the slice" onRetry={() => void slice.refetch()} />;
  }
  if (!slice.data) return <StateView kind="loading" title="Loading the slice…" />;
  const s = slice.data;
  return (
    <div className="stack">
      <PageHeader
        breadcrumb={<Link to={paths.slices.href()}>Slices</Link>}
        title={
          <>
            {s.name} <SliceStateBadge state={s.state} />
          </>
        }
        description={s.description || undefined}
        actions={
          <>
            <Link className="button-link secondary" to={paths.topology.href(s.id)}>
              On the topology
            </Link>
            {can('operator') && (
            <>
              <Link className="button-link secondary" to={paths.sliceEdit.href(s.id)}>
                Edit
              </Link>
              {confirming ? (
                <>
                  <Button variant="danger" busy={remove.isPending} onClick={() => remove.mutate(s.id, { onSuccess: () => navigate(paths.slices.href()) })}>
                    Delete {s.name}
                  </Button>
                  <Button onClick={() => setConfirming(false)}>Keep it</Button>
                </>
              ) : (
                <Button variant="danger" onClick={() => setConfirming(true)}>
                  Delete
                </Button>
              )}
            </>
            )}
          </>
        }
      />
      {admitted && (
        <Notice tone="ok" title="Admitted" >
          <span data-testid="admitted">
            {s.name} keeps its delay bound on every link it crosses; it is {s.state === 'pending' ? 'pending deployment' : s.state}.
          </span>
        </Notice>
      )}
      {remove.error && <Notice tone="bad" title="Not deleted">{errorMessage(remove.error)}</Notice>}
      <SliceSummary slice={s} health={health} />
      <LiveSliceView
        sliceId={s.id}
        rateBps={s.rate_bps}
        targetS={s.delay_target_s}
        boundS={health?.worstBoundS}
        scheme={s.scheme}
        abc={s.abc}
        burstLimitS={s.burst_limit_s}
      />
    </div>
  );
}
