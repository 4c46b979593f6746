import { useMutation, useQueryClient } from '@tanstack/react-query';

import type { SliceUpdate } from '@/lib/api/schema';
import { api, unwrap } from '@/lib/api-client';

export function updateSlice(sliceId: number, body: SliceUpdate) {
  return unwrap(
    api.PATCH('/api/v1/slices/{slice_id}', { params: { path: { slice_id: sliceId } }, body }),
  );
}

export function useUpdateSlice() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ sliceId, body }: { sliceId: number; body: SliceUpdate }) =>
      updateSlice(sliceId, body),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['slices'] }),
  });
}
