import { useState } from 'react';
import { Navigate, useNavigate, useSearchParams } from 'react-router';

import { paths } from '@/config/paths';
import { LoginForm } from '@/features/auth/components/login-form';
import { useSession } from '@/lib/auth';
import { takeSignOutReason } from '@/lib/session';

export function LoginRoute() {
  const signedIn = useSession();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const [reason] = useState(takeSignOutReason);
  const redirectTo = params.get('redirectTo');
  const target = redirectTo && redirectTo.startsWith('/') && !redirectTo.startsWith('//') ? redirectTo : paths.overview.href();
  if (signedIn) return <Navigate to={target} replace />;
  return (
    <div className="login-page">
      <main className="login-card">
        <div className="brand">
          <span className="brand-mark" aria-hidden="true" />
          <span>sliceportal</span>
        </div>
        <h1 style={{ fontSize: '1.2rem', marginBottom: 4 }}>Sign in</h1>
        <p className="muted" style={{ marginBottom: 16 }}>
          Guaranteed-delay network slices on P4 switches.
        </p>
        <LoginForm reason={reason} onSuccess={() => navigate(target, { replace: true })} />
      </main>
    </div>
  );
}
