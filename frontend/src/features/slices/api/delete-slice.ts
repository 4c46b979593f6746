import { useMutation, useQueryClient } from '@tanstack/react-query';

import { api, unwrap } from '@/lib/api-client';

export function deleteSlice(sliceId: number) {
  return unwrap(
    api.DELETE('/api/v1/slices/{slice_id}', { params: { path: { slice_id: sliceId } } }),
  );
}

export function useDeleteSlice() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: deleteSlice,
    onSuccess: (_data, sliceId) => {
      queryClient.removeQueries({ queryKey: ['slices', 'detail', sliceId] });
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['slices'] }),
  });
}
