/**
 * One link's Fig. 15 from the report: each slice's worst-case delay against capacity under one
 * model (log scale), its per-hop target dashed in the same colour, the link's capacity marked.
 */
import { useMemo } from 'react';
import type uPlot from 'uplot';

import {
  Chart,
  DELAY_CAPACITY_LAYOUT,
  drawMarker,
  seriesColour,
  type ChartData,
  type ChartOptions,
} from '@/components/ui/chart';
import { StateView } from '@/components/ui/states';
import { MODEL_LABELS } from '@/lib/analysis';
import type { LinkReport, Model } from '@/lib/api/schema';
import { formatRate } from '@/lib/format';

const ms = (_u: uPlot, v: number | null) => (v == null ? '—' : `${v.toPrecision(3)} ms`);

/** The x values (Mbit/s), then each slice's bound (ms), then each slice's target (ms). */
export function chartData(link: LinkReport, model: Model): ChartData {
  const x = link.curves.capacity_bps.map((c) => c / 1e6);
  const bounds = link.slices.map((s) => (link.curves.bound_s[model][s.name] ?? []).map((d) => (d === null ? null : d * 1e3)));
  const targets = link.slices.map((s) => x.map(() => s.delay_target_s * 1e3));
  return [x, ...bounds, ...targets] as ChartData;
}

export function ReportDelayChart({ link, model }: { link: LinkReport; model: Model }) {
  const options = useMemo<ChartOptions>(() => {
    const series: uPlot.Series[] = [{ label: 'Capacity (Mbit/s)' }];
    link.slices.forEach((s, i) => series.push({ label: `${s.name} (P${s.priority})`, stroke: seriesColour(i), width: 2, spanGaps: false, value: ms }));
    link.slices.forEach((s, i) =>
      series.push({ label: `target ${s.name}`, stroke: seriesColour(i), width: 1, dash: [4, 4], points: { show: false }, value: ms }),
    );
    const capacity = link.capacity_bps;
    return {
      ...DELAY_CAPACITY_LAYOUT,
      series,
      hooks: { draw: [(u: uPlot) => drawMarker(u, capacity / 1e6, '#111827', `C = ${formatRate(capacity)}`)] },
    };
  }, [link]);
  const data = useMemo(() => chartData(link, model), [link, model]);

  if (link.curves.capacity_bps.length === 0) {
    return <StateView kind="empty" compact title="No curve" detail="The curves need at least one slice on the link." />;
  }
  return (
    <Chart
      options={options}
      data={data}
      height={240}
      label={`Worst-case delay of each slice on ${link.name} against link capacity, ${MODEL_LABELS[model]} model`}
      caption={`${MODEL_LABELS[model]}. Log scale; dashed: each slice's per-hop target; black: the capacity now. Where a curve crosses its target is the least capacity for that slice.`}
    />
  );
}
