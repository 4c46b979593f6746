import { useState, type FormEvent } from 'react';

import { Button } from '@/components/ui/button';
import { Field } from '@/components/ui/field';
import { Notice } from '@/components/ui/notice';
import { useLogin } from '@/lib/auth';
import { ApiError, errorMessage } from '@/lib/problem';
import type { SignOutReason } from '@/lib/session';

export function LoginForm({ reason, onSuccess }: { reason: SignOutReason | null; onSuccess: () => void }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [submitted, setSubmitted] = useState(false);
  const login = useLogin();
  const missing = { username: !username.trim(), password: !password };

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    setSubmitted(true);
    if (missing.username || missing.password) return;
    login.mutate({ username: username.trim(), password }, { onSuccess });
  }

  const error = login.error;
  const message =
    error instanceof ApiError && error.status === 401
      ? 'Wrong username or password, or the account is deactivated.'
      : error
        ? errorMessage(error)
        : null;

  return (
    <form className="form" onSubmit={onSubmit} noValidate aria-label="Sign in">
      {reason === 'expired' && !error && (
        <Notice tone="warn">Your session ended. Sign in again to continue where you were.</Notice>
      )}
      {reason === 'signed-out' && !error && <Notice tone="info">You are signed out.</Notice>}
      {message && (
        <Notice tone="bad" title="Not signed in">
          {message}
        </Notice>
      )}
      <Field label="Username" error={submitted && missing.username ? 'Enter your username.' : undefined}>
        <input type="text" autoComplete="username" autoFocus value={username} onChange={(e) => setUsername(e.target.value)} />
      </Field>
      <Field label="Password" error={submitted && missing.password ? 'Enter your password.' : undefined}>
        <input type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} />
      </Field>
      <Button type="submit" variant="primary" busy={login.isPending}>
        Sign in
      </Button>
    </form>
  );
}
