import { Link } from 'react-router';

import { Card } from '@/components/ui/card';
import { PageHeader } from '@/components/ui/page-header';
import { paths } from '@/config/paths';
import { SlicesList } from '@/features/slices/components/slices-list';
import { useAuthorization } from '@/lib/auth';

export function SlicesRoute() {
  const { can } = useAuthorization();
  const create = can('operator') ? (
    <Link className="button-link" to={paths.sliceNew.href()}>
      New slice
    </Link>
  ) : undefined;
  return (
    <div className="stack">
      <PageHeader title="Slices" description="Every slice with its state and whether its worst-case delay stays within its target on every link." actions={create} />
      <Card>
        <SlicesList emptyAction={create} />
      </Card>
    </div>
  );
}
