/**
 * The live telemetry of one slice: `GET /api/v1/slices/{id}/telemetry/stream` read with an
 * EventSource, authenticated by the session cookie.
 *
 * On any error the EventSource is closed and the hook reconnects after 1, 2, 4 … 15 s, each
 * connection after a check of the session (`@/lib/event-stream`, shared with the alert stream).
 * States: `connecting` → `live` (a sample in the last STALE_AFTER_MS) → `stale` (connected,
 * no sample lately); `reconnecting` (with when and why); `forbidden` when the API refuses the
 * session check with 403. The last MAX_SAMPLES samples are kept.
 */
import { useEffect, useRef, useState } from 'react';

import { env } from '@/config/env';
import { openEventStream, type EventStream, type StreamControl } from '@/lib/event-stream';

import { parseSample, type TelemetrySample } from './telemetry';

export type StreamStatus = 'connecting' | 'live' | 'stale' | 'reconnecting' | 'forbidden';

export const STALE_AFTER_MS = 5000;
export const MAX_SAMPLES = 600;

export function streamUrl(sliceId: number): string {
  return `${env.apiBaseUrl}/api/v1/slices/${sliceId}/telemetry/stream`;
}

export interface TelemetryStream {
  status: StreamStatus;
  samples: TelemetrySample[];
  lastSampleAt: number | null;
  /** When the next reconnection attempt happens (epoch ms), while reconnecting. */
  retryAt: number | null;
  error: string | null;
  reconnectNow: () => void;
}

export function useTelemetryStream(sliceId: number, enabled = true): TelemetryStream {
  const [status, setStatus] = useState<StreamStatus>('connecting');
  const [samples, setSamples] = useState<TelemetrySample[]>([]);
  const [lastSampleAt, setLastSampleAt] = useState<number | null>(null);
  const [retryAt, setRetryAt] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [generation, setGeneration] = useState(0);
  const lastRef = useRef<number | null>(null);

  useEffect(() => {
    if (!enabled) return undefined;
    let stream: EventStream | null = null;

    const staleTimer = window.setInterval(() => {
      const last = lastRef.current;
      setStatus((current) =>
        current === 'live' && (last === null || Date.now() - last > STALE_AFTER_MS) ? 'stale' : current,
      );
    }, 1000);

    const onSample = (event: MessageEvent<string>, control: StreamControl) => {
      let sample: TelemetrySample | null = null;
      try {
        sample = parseSample(JSON.parse(event.data));
      } catch {
        sample = null;
      }
      if (!sample) return;
      control.resetBackoff();
      const now = Date.now();
      lastRef.current = now;
      setLastSampleAt(now);
      setStatus('live');
      const received = sample;
      setSamples((list) => {
        const next = list.length >= MAX_SAMPLES ? list.slice(list.length - MAX_SAMPLES + 1) : list.slice();
        next.push(received);
        return next;
      });
    };

    const timer = window.setTimeout(() => {
      setSamples([]);
      setError(null);
      setStatus('connecting');
      stream = openEventStream({
        url: streamUrl(sliceId),
        events: { sample: onSample },
        onConnect: () => setRetryAt(null),
        onOpen: () => {
          setError(null);
          setStatus((s) => (s === 'live' ? s : 'stale'));
        },
        onRetry: (reason, at) => {
          setError(reason);
          setStatus('reconnecting');
          setRetryAt(at);
        },
        onForbidden: (detail) => {
          setStatus('forbidden');
          setError(detail);
        },
      });
    }, 0);
    return () => {
      stream?.close();
      window.clearTimeout(timer);
      window.clearInterval(staleTimer);
    };
  }, [sliceId, enabled, generation]);

  return {
    status,
    samples,
    lastSampleAt,
    retryAt,
    error,
    reconnectNow: () => setGeneration((g) => g + 1),
  };
}
