/**
 * The live telemetry of one slice from the SSE stream, with automatic reconnection.
 *
 * States: `connecting` → `live` (a sample in the last STALE_AFTER_MS) → `stale` (connected,
 * no sample lately) ; on a dropped connection `reconnecting` with backoff 1, 2, 4 … 15 s;
 * `unavailable` when the endpoint does not exist (404: checked again every minute);
 * `forbidden` on 403. The last MAX_SAMPLES samples are kept.
 */
import { useEffect, useRef, useState } from 'react';

import { authorizedFetch } from '@/lib/api-client';
import { problemFrom } from '@/lib/problem';
import { SseParser } from '@/lib/sse';

import { parseSample, telemetryPaths, type TelemetrySample } from './telemetry';

export type StreamStatus = 'connecting' | 'live' | 'stale' | 'reconnecting' | 'unavailable' | 'forbidden';

export const STALE_AFTER_MS = 5000;
export const MAX_SAMPLES = 600;
const UNAVAILABLE_RETRY_MS = 60_000;

export function backoffMs(attempt: number): number {
  return Math.min(15_000, 1000 * 2 ** Math.max(0, attempt));
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
    let timer: number | undefined;
    let attempt = 0;

    const staleTimer = window.setInterval(() => {
      const last = lastRef.current;
      setStatus((current) =>
        current === 'live' && (last === null || Date.now() - last > STALE_AFTER_MS) ? 'stale' : current,
      );
    }, 1000);

    const schedule = (delay: number, next: StreamStatus) => {
      if (cancelled) return;
      setStatus(next);
      setRetryAt(Date.now() + delay);
      timer = window.setTimeout(() => void connect(), delay);
    };

    async function connect(): Promise<void> {
      if (cancelled) return;
      controller = new AbortController();
      setRetryAt(null);
      try {
        const response = await authorizedFetch(telemetryPaths.stream(sliceId), {
          headers: { Accept: 'text/event-stream' },
          signal: controller.signal,
        });
        if (!response.ok || !response.body) {
          let body: unknown;
          try {
            body = await response.json();
          } catch {
            body = undefined;
          }
          const problem = problemFrom(response.status, response.statusText, body);
          if (problem.isMissingEndpoint) return schedule(UNAVAILABLE_RETRY_MS, 'unavailable');
          if (response.status === 403) {
            setStatus('forbidden');
            setError(problem.problem.detail);
            return;
          }
          throw problem;
        }
        setStatus((s) => (s === 'live' ? s : 'stale'));
        setError(null);
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        const parser = new SseParser((event) => {
          if (event.event !== 'message' && event.event !== 'sample') return;
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
        });
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.push(value);
        }
        throw new Error('the stream ended');
      } catch (cause) {
        if (cancelled || (cause instanceof DOMException && cause.name === 'AbortError')) return;
        setError(cause instanceof Error ? cause.message : String(cause));
        const delay = backoffMs(attempt);
        attempt += 1;
        schedule(delay, 'reconnecting');
      }
    }

    timer = window.setTimeout(() => {
      setSamples([]);
      setStatus('connecting');
      void connect();
    }, 0);
    return () => {
      cancelled = true;
      controller?.abort();
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
