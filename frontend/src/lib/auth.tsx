/**
 * Sign-in and the signed-in user (the route guards built on them are `@/app/route-guards`).
 *
 * The API answers a short-lived bearer token (OAuth2 password flow); the user row, with its
 * role, is read from `GET /users/me`, so a role change shows on the next refresh.
 */
import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useSyncExternalStore } from 'react';

import type { Role, UserPublic } from './api/schema';
import { api, unwrap } from './api-client';
import { hasRole } from './authorization';
import { setSignOutReason, tokenStore, type Session } from './token-store';

export function useSession(): Session | null {
  return useSyncExternalStore(tokenStore.subscribe, tokenStore.get, tokenStore.get);
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
  return useQuery({ ...meQueryOptions(), enabled: !!session }).data;
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
    onSuccess: (token) => {
      queryClient.clear();
      tokenStore.set(token.access_token, token.expires_in);
    },
  });
}

export function useLogout() {
  const queryClient = useQueryClient();
  return () => {
    setSignOutReason('signed-out');
    tokenStore.clear();
    queryClient.clear();
  };
}

/** Sign the user out when the token's lifetime ends (the API would answer 401 anyway). */
export function useExpiryTimer(session: Session | null): void {
  useEffect(() => {
    if (!session) return undefined;
    const delay = Math.max(0, session.expiresAt - Date.now());
    const timer = window.setTimeout(
      () => {
        setSignOutReason('expired');
        tokenStore.clear();
      },
      Math.min(delay, 2 ** 31 - 1),
    );
    return () => window.clearTimeout(timer);
  }, [session]);
}
