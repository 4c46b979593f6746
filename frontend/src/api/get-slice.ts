import { queryOptions, useQuery } from '@tanstack/react-query';

import { api, unwrap } from '@/lib/api-client';

export function getSlice(sliceId: number, signal?: AbortSignal) {
  return unwrap(
    api.GET('/api/v1/slices/{slice_id}', { params: { path: { slice_id: sliceId } }, signal }),
  );
}

export const getSliceQueryOptions = (sliceId: number) =>
  queryOptions({
    queryKey: ['slices', 'detail', sliceId],
    queryFn: ({ signal }) => getSlice(sliceId, signal),
  });

/** The slice `sliceId`; with `enabled` false, no request (a page whose slice is optional). */
export function useSlice(sliceId: number, enabled = true) {
  return useQuery({ ...getSliceQueryOptions(sliceId), enabled });
}
