import { Link, useNavigate } from 'react-router';

import { useSlice } from '@/api/get-slice';
import { PageHeader } from '@/components/ui/page-header';
import { QueryView } from '@/components/ui/query-view';
import { paths } from '@/config/paths';
import { SliceForm } from '@/features/slices/components/slice-form';
import { useAuthorization } from '@/lib/auth';

import { NotFoundRoute } from './not-found';
import { useIdParam } from './use-id-param';

export function SliceEditRoute() {
  const id = useIdParam('sliceId');
  if (id === null) return <NotFoundRoute what="This slice" />;
  return <SliceEdit id={id} />;
}

function SliceEdit({ id }: { id: number }) {
  const navigate = useNavigate();
  const { can } = useAuthorization();
  const slice = useSlice(id);
  return (
    <div className="stack">
      <PageHeader
        breadcrumb={
          <>
            <Link to={paths.slices.href()}>Slices</Link> / <Link to={paths.slice.href(id)}>{slice.data?.name ?? `slice ${id}`}</Link>
          </>
        }
        title="Edit slice"
        description="A change of rate, burst, target, priority, packet size or links runs admission again; the slice goes back to pending."
      />
      <QueryView query={slice} what="the slice">
        {(data) => (
          <SliceForm
            initial={data}
            canAct={can('operator')}
            onSaved={() => navigate(paths.slice.href(id), { state: { admitted: true } })}
            onCancel={() => navigate(paths.slice.href(id))}
          />
        )}
      </QueryView>
    </div>
  );
}
