/**
 * Sign-in and the signed-in user (the route guards built on them are `@/app/route-guards`).
 *
 * The login (OAuth2 password form) sets the session cookie, which expires with the access token
 * (`access_token_minutes`); the first call after that answers 401 and ends the session. The token
 * in the login's answer is for the CLI and is left unread. The user row, with its role, is read
 * from `GET /users/me`, so a role change shows on the next refresh.
 */
import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useSyncExternalStore } from 'react';

import type { Role, UserPublic } from './api/schema';
import { api, unwrap } from './api-client';
import { hasRole } from './authorization';
import { sessionStore, setSignOutReason } from './session';

/** Whether the page is signed in (`@/lib/session`). */
export function useSession(): boolean {
  return useSyncExternalStore(sessionStore.subscribe, sessionStore.get, sessionStore.get);
}

export const meQueryOptions = () =>
  queryOptions({
    queryKey: ['users', 'me'],
    queryFn: ({ signal }) => unwrap(api.GET('/api/v1/users/me', { signal })),
    staleTime: 60_000,
  });

/** The signed-in user (undefined while loading or signed out). */
export function useUser(): UserPublic | undefined {
  const session = useSession();
  return useQuery({ ...meQueryOptions(), enabled: session }).data;
}

export function useAuthorization(): { user: UserPublic | undefined; can: (role: Role) => boolean } {
  const user = useUser();
  return { user, can: (role: Role) => hasRole(user, role) };
}

export interface Credentials {
  username: string;
  password: string;
}

export function useLogin() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({ username, password }: Credentials) =>
      unwrap(
        api.POST('/api/v1/login/access-token', {
          body: { username, password, grant_type: 'password' },
          bodySerializer: (body) => new URLSearchParams(body as Record<string, string>),
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        }),
      ),
    onSuccess: () => {
      queryClient.clear();
      sessionStore.start();
    },
  });
}

/** `POST /logout` clears the session cookies; the page signs out whatever it answers (the API
 * may be down: then the cookie lives until it expires). */
export function useLogout() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/logout')),
    onSettled: () => {
      setSignOutReason('signed-out');
      sessionStore.end();
      queryClient.clear();
    },
  });
}
