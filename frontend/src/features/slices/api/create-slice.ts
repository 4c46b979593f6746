import { useMutation, useQueryClient } from '@tanstack/react-query';

import type { SliceCreate } from '@/lib/api/schema';
import { api, unwrap } from '@/lib/api-client';

/** Create a slice; 409 admission-rejected (violations + fixes) when it does not fit. */
export function createSlice(body: SliceCreate) {
  return unwrap(api.POST('/api/v1/slices', { body }));
}

export function useCreateSlice() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: createSlice,
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['slices'] }),
  });
}
