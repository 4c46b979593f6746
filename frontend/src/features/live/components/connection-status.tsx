import { useEffect, useState } from 'react';

import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';

import type { TelemetryStream } from '../api/use-telemetry-stream';

function useNow(intervalMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), intervalMs);
    return () => window.clearInterval(timer);
  }, [intervalMs]);
  return now;
}

/** Where the stream stands: live, stale (no sample lately), reconnecting (and when). */
export function ConnectionStatus({ stream }: { stream: TelemetryStream }) {
  const now = useNow();
  const age = stream.lastSampleAt === null ? null : Math.round((now - stream.lastSampleAt) / 1000);
  switch (stream.status) {
    case 'live':
      return (
        <span className="row" data-testid="stream-status" data-status="live">
          <Badge tone="ok">
            <span className="pulse" style={{ background: 'var(--ok)', width: 8, height: 8 }} aria-hidden="true" /> Live
          </Badge>
          <span className="muted small">updated {age === null || age < 2 ? 'just now' : `${age} s ago`}</span>
        </span>
      );
    case 'stale':
      return (
        <span className="row" data-testid="stream-status" data-status="stale" role="status">
          <Badge tone="warn">Stale</Badge>
          <span className="muted small">
            {age === null ? 'connected, waiting for the first sample' : `no sample for ${age} s`}
          </span>
        </span>
      );
    case 'reconnecting': {
      const wait = stream.retryAt === null ? 0 : Math.max(0, Math.ceil((stream.retryAt - now) / 1000));
      return (
        <span className="row" data-testid="stream-status" data-status="reconnecting" role="status">
          <Badge tone="warn">Reconnecting</Badge>
          <span className="muted small">
            connection lost{stream.error ? ` (${stream.error})` : ''}; retrying in {wait} s
          </span>
          <Button size="sm" variant="ghost" onClick={stream.reconnectNow}>
            Reconnect now
          </Button>
        </span>
      );
    }
    case 'connecting':
      return (
        <span className="row" data-testid="stream-status" data-status="connecting">
          <Badge tone="info">Connecting…</Badge>
        </span>
      );
    case 'forbidden':
      return (
        <span data-testid="stream-status" data-status="forbidden">
          <Badge tone="warn">Not allowed</Badge>
        </span>
      );
  }
}
