/**
 * The live view of one slice: throughput against the rate limit, virtual and real delay
 * percentiles against the target and the analytical bound, drops and marks, CoDel's state of
 * a codel slice, an abc slice's busiest aggregates, and the delay CDF, updated every second from the telemetry stream; a
 * time-range picker for history.
 */
import { useState } from 'react';

import { Card } from '@/components/ui/card';
import { QueryErrorState, StateView } from '@/components/ui/states';
import type { AbcSettings, components } from '@/lib/api/schema';
import { formatDelay, formatPercent, formatRate } from '@/lib/format';

import { useTelemetryHistory } from '../api/get-telemetry-history';
import type { TelemetrySample } from '../api/telemetry';
import { useTelemetryStream } from '../api/use-telemetry-stream';

import { AbcStatus, aqmLabel } from './abc-status';
import { CodelStatus } from './codel-status';
import { ConnectionStatus } from './connection-status';
import { DelayCdfChart, DelayChart, DropsMarksChart, ThroughputChart } from './live-charts';

/**
 * A percentile as the histogram knows it: the upper edge of its bucket ("≤ 2 ms"). The
 * slice's histograms have their own edges (`edges`, the sample's: its delay target T last,
 * docs/telemetry.md); T also stands for the open bucket beyond it, so it only proves
 * "≥ 7T/8", the edge below it.
 */
export function formatBucket(seconds: number | null | undefined, edges: readonly number[] = []): string {
  if (seconds === null || seconds === undefined) return '—';
  const target = edges[edges.length - 1];
  const below = edges[edges.length - 2];
  return target !== undefined && below !== undefined && seconds >= target
    ? `≥ ${formatDelay(below)}`
    : `≤ ${formatDelay(seconds)}`;
}

/**
 * Whether a sample proves the p99 delay of a queue at or above the slice's target: more than
 * 1 % of its packets in the top bucket, at or beyond the last edge (the target), i.e. below
 * it less than 99 %.
 */
export function p99AtTarget(sample: TelemetrySample | undefined, queue: 'virtual' | 'real'): boolean {
  const below = sample?.cdf[sample.cdf.length - 1]?.[queue];
  return below !== null && below !== undefined && below < 0.99;
}

export const RANGES: { value: number | null; label: string }[] = [
  { value: null, label: 'Live' },
  { value: 15 * 60, label: '15 min' },
  { value: 60 * 60, label: '1 h' },
  { value: 6 * 3600, label: '6 h' },
  { value: 24 * 3600, label: '24 h' },
];

export function LiveSliceView({
  sliceId,
  rateBps,
  targetS,
  boundS,
  scheme,
  abc,
  burstLimitS,
}: {
  sliceId: number;
  rateBps: number;
  targetS: number;
  /** Worst analytical bound over the slice's links (null: unbounded; undefined: unknown). */
  boundS: number | null | undefined;
  /** The slice's queue scheme: a codel slice shows CoDel's state, an abc slice its busiest
   * aggregates. */
  scheme?: components['schemas']['QueueScheme'];
  /** An abc slice's parameters and burst limit: the drop threshold of each aggregate. */
  abc?: AbcSettings | null;
  burstLimitS?: number;
}) {
  const [range, setRange] = useState<number | null>(null);
  const live = range === null;
  const stream = useTelemetryStream(sliceId, live);
  const history = useTelemetryHistory(sliceId, range);
  const all = live ? stream.samples : (history.data?.samples ?? []);
  // A slice crossing several switches has one series per switch: show one at a time.
  const switchIds = [...new Set(all.map((s) => s.switchId))].sort((a, b) => a - b);
  const [chosenSwitch, setChosenSwitch] = useState<number | null>(null);
  const switchId = chosenSwitch !== null && switchIds.includes(chosenSwitch) ? chosenSwitch : switchIds[0];
  const samples = switchIds.length > 1 ? all.filter((s) => s.switchId === switchId) : all;
  const latest = samples[samples.length - 1];

  const picker = (
    <div className="segmented" role="group" aria-label="Time range">
      {RANGES.map((r) => (
        <button key={r.label} type="button" aria-pressed={range === r.value} onClick={() => setRange(r.value)}>
          {r.label}
        </button>
      ))}
    </div>
  );

  let body: React.ReactNode;
  if (live && stream.status === 'forbidden') {
    body = <StateView kind="forbidden" title="Your role may not watch this slice" detail={stream.error ?? undefined} />;
  } else if (!live && history.isError) {
    body = <QueryErrorState error={history.error} what="the telemetry history" onRetry={() => void history.refetch()} />;
  } else if (!live && history.isPending) {
    body = <StateView kind="loading" title="Loading the history…" />;
  } else if (samples.length === 0) {
    body = live ? (
      <StateView kind="loading" title="Waiting for the first sample…" detail="Samples arrive about once a second once the slice carries traffic." />
    ) : (
      <StateView kind="empty" title="No samples in this range" detail="Pick a longer range, or go back to Live." />
    );
  } else {
    body = (
      <div className="stack">
        {switchIds.length > 1 && (
          <div className="segmented" role="group" aria-label="Switch">
            {switchIds.map((id) => (
              <button key={id} type="button" aria-pressed={id === switchId} onClick={() => setChosenSwitch(id)}>
                switch {id}
              </button>
            ))}
          </div>
        )}
        <div className="stats" data-testid="live-numbers">
          <div className="stat">
            <div className="stat-label">Throughput</div>
            <div className="stat-value">{formatRate(latest?.throughputBps)}</div>
            <div className="stat-note">limit {formatRate(rateBps)}</div>
          </div>
          <div className="stat">
            <div className="stat-label">Virtual delay p99</div>
            <div className={`stat-value ${p99AtTarget(latest, 'virtual') ? 'bound-bad' : ''}`}>{formatBucket(latest?.vq.p99, latest?.edges)}</div>
            <div className="stat-note">target {formatDelay(targetS)}</div>
          </div>
          <div className="stat">
            <div className="stat-label">Real delay p99</div>
            <div className="stat-value">{formatBucket(latest?.rq.p99, latest?.edges)}</div>
            <div className="stat-note">bound {boundS === undefined ? '…' : formatDelay(boundS)}</div>
          </div>
          <div className="stat">
            <div className="stat-label">Drops / marks</div>
            <div className="stat-value">{formatPercent(latest?.dropRatio, 2)}</div>
            <div className="stat-note" data-testid="drops-by-reason">
              burst limit {formatPercent(latest?.drops.burstLimit, 2)} · real queue {formatPercent(latest?.drops.realQueue, 2)} ·{' '}
              {aqmLabel(scheme)} {formatPercent(latest?.drops.aqm, 2)}
            </div>
            <div className="stat-note">{formatPercent(latest?.markRatio, 2)} ECN-marked</div>
          </div>
        </div>
        <CodelStatus scheme={scheme} sample={latest} />
        <AbcStatus scheme={scheme} sample={latest} abc={abc} burstLimitS={burstLimitS} />
        <div className="grid-2">
          <Card title="Throughput"><ThroughputChart samples={samples} rateBps={rateBps} /></Card>
          <Card title="Queuing delay"><DelayChart samples={samples} targetS={targetS} boundS={boundS} /></Card>
          <Card title="Drops by reason and ECN marks"><DropsMarksChart samples={samples} aqmLabel={aqmLabel(scheme)} /></Card>
          <Card title="Delay CDF"><DelayCdfChart sample={latest} targetS={targetS} /></Card>
        </div>
      </div>
    );
  }

  return (
    <Card
      title="Live"
      actions={
        <>
          {live ? <ConnectionStatus stream={stream} /> : history.isFetching && <span className="muted small">refreshing…</span>}
          {picker}
        </>
      }
    >
      {body}
    </Card>
  );
}
