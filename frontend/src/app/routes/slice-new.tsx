import { Link, useNavigate } from 'react-router';

import { PageHeader } from '@/components/ui/page-header';
import { paths } from '@/config/paths';
import { SliceForm } from '@/features/slices/components/slice-form';
import { useAuthorization } from '@/lib/auth';

export function SliceNewRoute() {
  const navigate = useNavigate();
  const { can } = useAuthorization();
  return (
    <div className="stack">
      <PageHeader
        breadcrumb={<Link to={paths.slices.href()}>Slices</Link>}
        title="New slice"
        description="Admission runs on every link the slice crosses; the panel on the right shows the effect before you submit."
      />
      <SliceForm
        canAct={can('operator')}
        onSaved={(slice) => navigate(paths.slice.href(slice.id), { state: { admitted: true } })}
        onCancel={() => navigate(paths.slices.href())}
      />
    </div>
  );
}
