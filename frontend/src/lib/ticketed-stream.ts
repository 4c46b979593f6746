/**
 * An EventSource opened with a stream ticket (`?token=`, since EventSource cannot send the
 * bearer header) that reconnects by itself: the live telemetry and the alert stream share it.
 *
 * Every (re)connection takes a fresh ticket (tickets are valid 60 s): on any error the
 * EventSource is closed (its own retry would reuse an expired ticket) and a new one is opened
 * after 1, 2, 4 … 15 s. A 403 on the ticket stops with `onForbidden`; a 401 stops silently (the
 * API client ends the session). Nothing here is React: the hooks call `openTicketedStream` in an
 * effect and `close` the handle in its cleanup.
 */
import { ApiError, errorMessage } from '@/lib/problem';

export function backoffMs(attempt: number): number {
  return Math.min(15_000, 1000 * 2 ** Math.max(0, attempt));
}

/** What a listener may do to the stream: say it is healthy, so the next retry waits 1 s again. */
export interface StreamControl {
  resetBackoff: () => void;
}

export interface TicketedStreamOptions {
  /** `POST /api/v1/stream/ticket` (`@/api/create-stream-ticket`). */
  createTicket: (signal: AbortSignal) => Promise<{ ticket: string }>;
  /** The stream's URL for a ticket. */
  url: (ticket: string) => string;
  /** Listeners by SSE event name. */
  events: Record<string, (event: MessageEvent<string>, control: StreamControl) => void>;
  /** Each attempt starts (before its ticket is asked for). */
  onConnect?: () => void;
  /** The server accepted the connection. */
  onOpen?: (control: StreamControl) => void;
  /** The connection failed or dropped (or the ticket failed): retrying at `retryAt` (epoch ms). */
  onRetry?: (reason: string, retryAt: number) => void;
  /** The API refused the ticket with 403: no retry. */
  onForbidden?: (detail: string) => void;
}

export interface TicketedStream {
  close: () => void;
}

export function openTicketedStream(options: TicketedStreamOptions): TicketedStream {
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
    let ticket: string;
    try {
      ticket = (await options.createTicket(controller.signal)).ticket;
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
    const es = new EventSource(options.url(ticket));
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
