/**
 * The guards of the app's routes: the signed-in part (`ProtectedRoute`) and the pages of a
 * role (`RequireRole`), with designed loading, error and forbidden states.
 */
import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Navigate, useLocation } from 'react-router';

import { FullPageState } from '@/components/ui/states';
import { paths } from '@/config/paths';
import type { Role } from '@/lib/api/schema';
import { meQueryOptions, useAuthorization, useSession } from '@/lib/auth';

/** Children only for a signed-in user whose row could be read; the sign-in page otherwise. */
export function ProtectedRoute({ children }: { children: ReactNode }) {
  const signedIn = useSession();
  const location = useLocation();
  const me = useQuery({ ...meQueryOptions(), enabled: signedIn });

  if (!signedIn) {
    return <Navigate to={paths.login.href(location.pathname + location.search)} replace />;
  }
  if (me.isPending) return <FullPageState kind="loading" title="Signing you in…" />;
  if (me.isError) {
    return (
      <FullPageState
        kind="error"
        title="Your account could not be read"
        error={me.error}
        onRetry={() => void me.refetch()}
      />
    );
  }
  return <>{children}</>;
}

/** Children only when the user has `role`; a designed "forbidden" state otherwise. */
export function RequireRole({ needs: role, children }: { needs: Role; children: ReactNode }) {
  const { user, can } = useAuthorization();
  if (!user) return null;
  if (!can(role)) {
    return (
      <FullPageState
        kind="forbidden"
        title="This page is not for your role"
        detail={`It needs the ${role} role; you are signed in as ${user.username} (${user.role}). Ask an administrator if you need it.`}
      />
    );
  }
  return <>{children}</>;
}
