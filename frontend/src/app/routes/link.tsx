import { LinkView } from '@/features/links/components/link-view';
import { useAuthorization } from '@/lib/auth';

import { NotFoundRoute } from './not-found';
import { useIdParam } from './use-id-param';

export function LinkRoute() {
  const id = useIdParam('linkId');
  const { can } = useAuthorization();
  if (id === null) return <NotFoundRoute what="This link" />;
  return <LinkView key={id} linkId={id} canAct={can('operator')} />;
}
