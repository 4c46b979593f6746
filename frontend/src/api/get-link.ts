import { queryOptions, useQuery } from '@tanstack/react-query';

import { api, unwrap } from '@/lib/api-client';

export function getLink(linkId: number, signal?: AbortSignal) {
  return unwrap(api.GET('/api/v1/links/{link_id}', { params: { path: { link_id: linkId } }, signal }));
}

export const getLinkQueryOptions = (linkId: number) =>
  queryOptions({
    queryKey: ['links', 'detail', linkId],
    queryFn: ({ signal }) => getLink(linkId, signal),
  });

export function useLink(linkId: number) {
  return useQuery(getLinkQueryOptions(linkId));
}
