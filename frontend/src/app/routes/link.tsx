import { Link } from 'react-router';

import { paths } from '@/config/paths';
import { LinkView } from '@/features/links/components/link-view';
import { useAuthorization } from '@/lib/auth';

import { NotFoundRoute } from './not-found';
import { useIdParam } from './use-id-param';

export function LinkRoute() {
  const id = useIdParam('linkId');
  const { can } = useAuthorization();
  if (id === null) return <NotFoundRoute what="This link" />;
  return (
    <>
      <div className="route-links">
        <Link className="btn btn-sm" to={paths.reports.href({ kind: 'link', id })}>
          Capacity report
        </Link>
      </div>
      <LinkView key={id} linkId={id} canAct={can('operator')} />
    </>
  );
}
