/**
 * Alerts as they happen: `GET /api/v1/stream` read with an EventSource (authenticated by the
 * session cookie). Every `alert` event (`{event: firing/resolved/acknowledged, alert}`)
 * invalidates the alerts queries, so the lists refetch at once instead of on the next poll;
 * `samples` events are not listened to. Reconnection is `@/lib/event-stream`'s (a session
 * check per connection, back-off 1, 2, 4 … 15 s). The lists keep a slow poll
 * (`ALERTS_FALLBACK_POLL_MS`) in case the stream is down.
 *
 * States: `connecting` → `live` (the stream is open) → `reconnecting`; `forbidden` when the API
 * refuses the session check with 403; `unsupported` without EventSource (the poll alone then).
 */
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';

import { env } from '@/config/env';
import { openEventStream, type EventStream } from '@/lib/event-stream';

import { ALERTS_QUERY_KEY } from './get-alerts';

export type AlertStreamStatus = 'connecting' | 'live' | 'reconnecting' | 'forbidden' | 'unsupported';

// events=alert: the server then sends no samples (every switch's, every second) to this page.
export const ALERT_STREAM_URL = `${env.apiBaseUrl}/api/v1/stream?events=alert`;

export function useAlertStream(enabled = true): AlertStreamStatus {
  const queryClient = useQueryClient();
  const [status, setStatus] = useState<AlertStreamStatus>('connecting');

  useEffect(() => {
    if (!enabled) return undefined;
    let stream: EventStream | null = null;
    let dropped = false;
    const timer = window.setTimeout(() => {
      if (typeof EventSource === 'undefined') {
        setStatus('unsupported');
        return;
      }
      setStatus('connecting');
      stream = openEventStream({
        url: ALERT_STREAM_URL,
        events: {
          alert: (_event, control) => {
            control.resetBackoff();
            void queryClient.invalidateQueries({ queryKey: ALERTS_QUERY_KEY });
          },
        },
        onOpen: (control) => {
          // Alert events are rare: an accepted connection is the sign of health here.
          control.resetBackoff();
          setStatus('live');
          // Events may have been missed while the stream was down: read the lists again.
          if (dropped) void queryClient.invalidateQueries({ queryKey: ALERTS_QUERY_KEY });
          dropped = false;
        },
        onRetry: () => {
          dropped = true;
          setStatus('reconnecting');
        },
        onForbidden: () => setStatus('forbidden'),
      });
    }, 0);
    return () => {
      stream?.close();
      window.clearTimeout(timer);
    };
  }, [enabled, queryClient]);

  return status;
}
