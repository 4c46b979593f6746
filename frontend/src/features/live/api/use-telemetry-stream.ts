/**
 * The live telemetry of one slice: `GET /api/v1/slices/{id}/telemetry/stream` read with an
 * EventSource, authenticated by a stream ticket (`POST /api/v1/stream/ticket`, valid 60 s)
 * passed as `?token=`, since EventSource cannot send the bearer header.
 *
 * Every (re)connection takes a fresh ticket: on any error the EventSource is closed (its own
 * retry would reuse an expired ticket) and the hook reconnects after 1, 2, 4 … 15 s.
 * States: `connecting` → `live` (a sample in the last STALE_AFTER_MS) → `stale` (connected,
 * no sample lately); `reconnecting` (with when and why); `forbidden` when the API refuses the
 * ticket with 403. The last MAX_SAMPLES samples are kept.
 */
import { useEffect, useRef, useState } from 'react';

import { env } from '@/config/env';
import { ApiError, errorMessage } from '@/lib/problem';

import { createStreamTicket } from './create-stream-ticket';
import { parseSample, type TelemetrySample } from './telemetry';

export type StreamStatus = 'connecting' | 'live' | 'stale' | 'reconnecting' | 'forbidden';

export const STALE_AFTER_MS = 5000;
export const MAX_SAMPLES = 600;

export function backoffMs(attempt: number): number {
  return Math.min(15_000, 1000 * 2 ** Math.max(0, attempt));
}

export function streamUrl(sliceId: number, ticket: string): string {
  return `${env.apiBaseUrl}/api/v1/slices/${sliceId}/telemetry/stream?token=${encodeURIComponent(ticket)}`;
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
    let cancelled = false;
    let controller: AbortController | null = null;
    let source: EventSource | null = null;
    let timer: number | undefined;
    let attempt = 0;

    const staleTimer = window.setInterval(() => {
      const last = lastRef.current;
      setStatus((current) =>
        current === 'live' && (last === null || Date.now() - last > STALE_AFTER_MS) ? 'stale' : current,
      );
    }, 1000);

    const retry = (reason: string) => {
      if (cancelled) return;
      source?.close();
      source = null;
      const delay = backoffMs(attempt);
      attempt += 1;
      setError(reason);
      setStatus('reconnecting');
      setRetryAt(Date.now() + delay);
      timer = window.setTimeout(() => void connect(), delay);
    };

    const onSample = (event: MessageEvent<string>) => {
      let sample: TelemetrySample | null = null;
      try {
        sample = parseSample(JSON.parse(event.data));
      } catch {
        sample = null;
      }
      if (!sample) return;
      attempt = 0;
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

    async function connect(): Promise<void> {
      if (cancelled) return;
      controller = new AbortController();
      setRetryAt(null);
      let ticket: string;
      try {
        ticket = (await createStreamTicket(controller.signal)).ticket;
      } catch (cause) {
        if (cancelled || (cause instanceof DOMException && cause.name === 'AbortError')) return;
        if (cause instanceof ApiError && cause.status === 403) {
          setStatus('forbidden');
          setError(cause.problem.detail);
          return;
        }
        // 401 ends the session (the client signs out); anything else is retried.
        if (cause instanceof ApiError && cause.status === 401) return;
        return retry(errorMessage(cause));
      }
      if (cancelled) return;
      const es = new EventSource(streamUrl(sliceId, ticket));
      source = es;
      es.onopen = () => {
        if (source !== es) return;
        setError(null);
        setStatus((s) => (s === 'live' ? s : 'stale'));
      };
      es.addEventListener('sample', onSample);
      es.onerror = () => {
        if (source === es) retry('the connection was lost');
      };
    }

    timer = window.setTimeout(() => {
      setSamples([]);
      setError(null);
      setStatus('connecting');
      void connect();
    }, 0);
    return () => {
      cancelled = true;
      controller?.abort();
      source?.close();
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
