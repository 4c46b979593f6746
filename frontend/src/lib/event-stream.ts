/**
 * An EventSource on one of the API's streams that reconnects by itself: the live telemetry and
 * the alert stream share it. It authenticates by the session cookie, like every call of the
 * page (no ticket, no token in the URL).
 *
 * EventSource cannot see an answer's status, so every (re)connection first checks the session
 * with `GET /api/v1/users/me` through the API client: a 401 stops silently (the client ends the
 * session), a 403 stops with `onForbidden`. On any error the EventSource is closed (its own
 * retry would skip that check) and a new one is opened after 1, 2, 4 … 15 s. Nothing here is
 * React: the hooks call `openEventStream` in an effect and `close` the handle in its cleanup.
 */
import { api, unwrap } from '@/lib/api-client';
import { ApiError, errorMessage } from '@/lib/problem';

export function backoffMs(attempt: number): number {
  return Math.min(15_000, 1000 * 2 ** Math.max(0, attempt));
}

/** What a listener may do to the stream: say it is healthy, so the next retry waits 1 s again. */
export interface StreamControl {
  resetBackoff: () => void;
}

export interface EventStreamOptions {
  /** The stream's URL. */
  url: string;
  /** Listeners by SSE event name. */
  events: Record<string, (event: MessageEvent<string>, control: StreamControl) => void>;
  /** Each attempt starts (before the session is checked). */
  onConnect?: () => void;
  /** The server accepted the connection. */
  onOpen?: (control: StreamControl) => void;
  /** The connection failed or dropped (or the check failed): retrying at `retryAt` (epoch ms). */
  onRetry?: (reason: string, retryAt: number) => void;
  /** The API refused the check with 403: no retry. */
  onForbidden?: (detail: string) => void;
}

export interface EventStream {
  close: () => void;
}

function checkSession(signal: AbortSignal): Promise<unknown> {
  return unwrap(api.GET('/api/v1/users/me', { signal }));
}

export function openEventStream(options: EventStreamOptions): EventStream {
  let closed = false;
  let controller: AbortController | null = null;
  let source: EventSource | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let attempt = 0;
  const control: StreamControl = {
    resetBackoff: () => {
      attempt = 0;
    },
  };

  const retry = (reason: string) => {
    if (closed) return;
    source?.close();
    source = null;
    const delay = backoffMs(attempt);
    attempt += 1;
    options.onRetry?.(reason, Date.now() + delay);
    timer = setTimeout(() => void connect(), delay);
  };

  async function connect(): Promise<void> {
    if (closed) return;
    controller = new AbortController();
    options.onConnect?.();
    try {
      await checkSession(controller.signal);
    } catch (cause) {
      if (closed || (cause instanceof DOMException && cause.name === 'AbortError')) return;
      if (cause instanceof ApiError && cause.status === 403) {
        options.onForbidden?.(cause.problem.detail);
        return;
      }
      // 401 ends the session (the client signs out); anything else is retried.
      if (cause instanceof ApiError && cause.status === 401) return;
      return retry(errorMessage(cause));
    }
    if (closed) return;
    const es = new EventSource(options.url);
    source = es;
    es.onopen = () => {
      if (source === es) options.onOpen?.(control);
    };
    for (const [name, listener] of Object.entries(options.events)) {
      es.addEventListener(name, (event) => {
        if (source === es) listener(event as MessageEvent<string>, control);
      });
    }
    es.onerror = () => {
      if (source === es) retry('the connection was lost');
    };
  }

  void connect();
  return {
    close: () => {
      closed = true;
      controller?.abort();
      source?.close();
      source = null;
      clearTimeout(timer);
    },
  };
}
