import { useMemo } from 'react';
import type uPlot from 'uplot';

import { Chart, type ChartData, type ChartOptions } from '@/components/ui/chart';

import type { TelemetrySample } from '../api/telemetry';

const ms = (s: number | null) => (s === null ? null : s * 1e3);

function timeOptions(yLabel: string, series: uPlot.Series[], yScale: uPlot.Scale = {}): ChartOptions {
  return {
    scales: { x: { time: true }, y: { ...yScale } },
    axes: [{}, { label: yLabel, labelSize: 20, size: 60 }],
    series: [{}, ...series],
    legend: { show: true },
    cursor: { drag: { x: false, y: false } },
  };
}

const line = (label: string, stroke: string, extra: Partial<uPlot.Series> = {}): uPlot.Series => ({
  label,
  stroke,
  width: 1.6,
  points: { show: false },
  ...extra,
});
const reference = (label: string, stroke: string): uPlot.Series =>
  line(label, stroke, { dash: [6, 4], width: 1.4 });

export function ThroughputChart({ samples, rateBps }: { samples: TelemetrySample[]; rateBps: number }) {
  const options = useMemo(
    () => timeOptions('Mbit/s', [line('throughput', '#1d4ed8', { fill: 'rgba(29,78,216,0.08)' }), reference('rate limit', '#b91c1c')], { range: (_u, _min, max) => [0, Math.max(max, (rateBps / 1e6) * 1.15)] }),
    [rateBps],
  );
  const data = useMemo<ChartData>(
    () => [samples.map((s) => s.t), samples.map((s) => s.throughputBps / 1e6), samples.map(() => rateBps / 1e6)],
    [samples, rateBps],
  );
  return <Chart options={options} data={data} height={220} label="Throughput against the rate limit" />;
}

export function DelayChart({
  samples,
  targetS,
  boundS,
}: {
  samples: TelemetrySample[];
  targetS: number;
  boundS: number | null | undefined;
}) {
  const hasBound = typeof boundS === 'number';
  const options = useMemo(
    () =>
      timeOptions('ms', [
        line('virtual p50', '#93c5fd'),
        line('virtual p95', '#3b82f6'),
        line('virtual p99', '#1e3a8a', { width: 2 }),
        line('real p50', '#fcd34d'),
        line('real p95', '#f59e0b'),
        line('real p99', '#b45309', { width: 2 }),
        reference('target', '#b91c1c'),
        ...(hasBound ? [reference('analytical bound', '#7c3aed')] : []),
      ], { range: (_u, _min, max) => [0, Math.max(max, targetS * 1e3 * 1.15, hasBound ? (boundS as number) * 1e3 * 1.05 : 0)] }),
    [targetS, boundS, hasBound],
  );
  const data = useMemo<ChartData>(() => {
    const columns: (number | null)[][] = [
      samples.map((s) => ms(s.vq.p50)),
      samples.map((s) => ms(s.vq.p95)),
      samples.map((s) => ms(s.vq.p99)),
      samples.map((s) => ms(s.rq.p50)),
      samples.map((s) => ms(s.rq.p95)),
      samples.map((s) => ms(s.rq.p99)),
      samples.map(() => targetS * 1e3),
    ];
    if (hasBound) columns.push(samples.map(() => (boundS as number) * 1e3));
    return [samples.map((s) => s.t), ...columns] as ChartData;
  }, [samples, targetS, boundS, hasBound]);
  return <Chart options={options} data={data} height={260} label="Virtual and real queuing delay percentiles against the target and the analytical bound" />;
}

/** Drops by reason (burst limit, real queue, the slice's CoDel or ABC: `aqmLabel`) and ECN
 * marks, % of packets. */
export function DropsMarksChart({ samples, aqmLabel = 'CoDel' }: { samples: TelemetrySample[]; aqmLabel?: string }) {
  const options = useMemo(
    () =>
      timeOptions(
        '% of packets',
        [
          line('dropped at the burst limit', '#b91c1c'),
          line('dropped by the real queue', '#ea580c'),
          line(`dropped by ${aqmLabel}`, '#0f766e'),
          line('ECN-marked', '#7c3aed'),
        ],
        { range: (_u, _min, max) => [0, Math.max(1, max)] },
      ),
    [aqmLabel],
  );
  const data = useMemo<ChartData>(
    () => [
      samples.map((s) => s.t),
      samples.map((s) => s.drops.burstLimit * 100),
      samples.map((s) => s.drops.realQueue * 100),
      samples.map((s) => s.drops.aqm * 100),
      samples.map((s) => s.markRatio * 100),
    ],
    [samples],
  );
  return <Chart options={options} data={data} height={180} label="Drop ratios by reason and ECN mark ratio" />;
}

export function DelayCdfChart({ sample, targetS }: { sample: TelemetrySample | undefined; targetS: number }) {
  const options = useMemo<ChartOptions>(
    () => ({
      scales: { x: { time: false, distr: 3, log: 10 }, y: { range: [0, 1] } },
      axes: [{ label: 'Delay (ms)', labelSize: 20, size: 40 }, { label: 'Fraction of packets', labelSize: 20, size: 50 }],
      series: [
        {},
        line('virtual queue', '#1d4ed8', { width: 2 }),
        line('real queue', '#d97706', { width: 2 }),
      ],
      legend: { show: true },
      hooks: {
        draw: [
          (u: uPlot) => {
            const x = u.valToPos(targetS * 1e3, 'x', true);
            if (!Number.isFinite(x)) return;
            const ctx = u.ctx;
            ctx.save();
            ctx.strokeStyle = '#b91c1c';
            ctx.setLineDash([6, 4]);
            ctx.beginPath();
            ctx.moveTo(x, u.bbox.top);
            ctx.lineTo(x, u.bbox.top + u.bbox.height);
            ctx.stroke();
            ctx.restore();
          },
        ],
      },
    }),
    [targetS],
  );
  const data = useMemo<ChartData>(() => {
    const points = (sample?.cdf ?? []).filter((p) => Number.isFinite(p.delayS) && p.delayS > 0);
    return [points.map((p) => p.delayS * 1e3), points.map((p) => p.virtual), points.map((p) => p.real)] as ChartData;
  }, [sample]);
  return <Chart options={options} data={data} height={220} label="Cumulative distribution of the queuing delay in the last second" caption="Dashed: the delay target. Points at the edges of the slice's delay histogram: its target T (the last) and T/16 to 7T/8 below it." />;
}
