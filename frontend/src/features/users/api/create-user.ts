import { useMutation, useQueryClient } from '@tanstack/react-query';

import type { UserCreate } from '@/lib/api/schema';
import { api, unwrap } from '@/lib/api-client';

export function createUser(body: UserCreate) {
  return unwrap(api.POST('/api/v1/users', { body }));
}

export function useCreateUser() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: createUser,
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['users'] }),
  });
}
