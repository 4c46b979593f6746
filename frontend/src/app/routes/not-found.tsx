import { Link } from 'react-router';

import { FullPageState } from '@/components/ui/states';
import { paths } from '@/config/paths';

export function NotFoundRoute({ what }: { what?: string }) {
  return (
    <FullPageState
      kind="empty"
      title={what ? `${what} does not exist` : 'This page does not exist'}
      detail="It may have been deleted, or the address is mistyped."
      action={<Link to={paths.overview.href()}>Go to the overview</Link>}
    />
  );
}
