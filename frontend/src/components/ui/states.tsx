/**
 * The designed states of every view: loading, empty, error (with retry; network errors
 * say the app keeps retrying), forbidden, and "not available yet" (an endpoint this server
 * does not have).
 */
import type { ReactNode } from 'react';

import { ApiError, errorMessage } from '@/lib/problem';

import { Button } from './button';
import { Spinner } from './spinner';

export type StateKind = 'loading' | 'empty' | 'error' | 'forbidden' | 'unavailable';

const ICONS: Record<StateKind, string> = {
  loading: '',
  empty: '○',
  error: '!',
  forbidden: '⊘',
  unavailable: '◷',
};

export function StateView({
  kind,
  title,
  detail,
  error,
  onRetry,
  action,
  compact,
}: {
  kind: StateKind;
  title: ReactNode;
  detail?: ReactNode;
  error?: unknown;
  onRetry?: () => void;
  action?: ReactNode;
  compact?: boolean;
}) {
  const message = error !== undefined ? errorMessage(error) : undefined;
  const network = error instanceof ApiError && error.isNetwork;
  return (
    <div
      className={`state state-${kind} ${compact ? 'state-compact' : ''}`}
      role={kind === 'error' ? 'alert' : 'status'}
      aria-live="polite"
      data-state={kind}
    >
      <div className="state-icon" aria-hidden="true">
        {kind === 'loading' ? <Spinner /> : ICONS[kind]}
      </div>
      <div className="state-text">
        <p className="state-title">{title}</p>
        {detail && <p className="state-detail">{detail}</p>}
        {message && <p className="state-detail">{message}</p>}
        {network && (
          <p className="state-detail">The page retries by itself when the connection is back.</p>
        )}
        {(onRetry || action) && (
          <div className="state-actions">
            {onRetry && (
              <Button size="sm" onClick={onRetry}>
                Try again
              </Button>
            )}
            {action}
          </div>
        )}
      </div>
    </div>
  );
}

export function FullPageState(props: Parameters<typeof StateView>[0]) {
  return (
    <div className="full-page-state">
      <StateView {...props} />
    </div>
  );
}

/** The right state for a failed query: forbidden, not available yet, or an error. */
export function QueryErrorState({
  error,
  what,
  onRetry,
  compact,
}: {
  error: unknown;
  what: string;
  onRetry?: () => void;
  compact?: boolean;
}) {
  if (error instanceof ApiError && error.status === 403) {
    return (
      <StateView
        kind="forbidden"
        compact={compact}
        title={`Your role may not see ${what}`}
        detail={error.problem.detail}
      />
    );
  }
  if (error instanceof ApiError && error.isMissingEndpoint) {
    return (
      <StateView
        kind="unavailable"
        compact={compact}
        title={`${capitalise(what)}: not available yet`}
        detail="This server does not offer it yet; it appears here as soon as the backend does."
      />
    );
  }
  return (
    <StateView
      kind="error"
      compact={compact}
      title={`Could not load ${what}`}
      error={error}
      {...(onRetry ? { onRetry } : {})}
    />
  );
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
