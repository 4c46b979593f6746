import { useMutation, useQueryClient } from '@tanstack/react-query';

import type { UserUpdate } from '@/lib/api/schema';
import { api, unwrap } from '@/lib/api-client';

export function updateUser(userId: number, body: UserUpdate) {
  return unwrap(api.PATCH('/api/v1/users/{user_id}', { params: { path: { user_id: userId } }, body }));
}

export function useUpdateUser() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ userId, body }: { userId: number; body: UserUpdate }) => updateUser(userId, body),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['users'] }),
  });
}
