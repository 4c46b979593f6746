import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';

import { QueryErrorState, StateView } from './states';

/**
 * Render a query's data, or its loading / error / forbidden / unavailable / empty state.
 * `isEmpty` decides when the data counts as empty.
 */
export function QueryView<T>({
  query,
  what,
  children,
  isEmpty,
  empty,
  compact,
}: {
  query: UseQueryResult<T>;
  what: string;
  children: (data: T) => ReactNode;
  isEmpty?: (data: T) => boolean;
  empty?: ReactNode;
  compact?: boolean;
}) {
  if (query.isPending) {
    return <StateView kind="loading" compact={compact} title={`Loading ${what}…`} />;
  }
  if (query.isError) {
    return (
      <QueryErrorState
        error={query.error}
        what={what}
        compact={compact}
        onRetry={() => void query.refetch()}
      />
    );
  }
  if (isEmpty?.(query.data)) {
    return <>{empty ?? <StateView kind="empty" compact={compact} title={`No ${what} yet`} />}</>;
  }
  return <>{children(query.data)}</>;
}
