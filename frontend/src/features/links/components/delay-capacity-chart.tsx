/**
 * The paper's Fig. 15 for this link's slices: worst-case delay against link capacity, one
 * curve per priority level (its slices share it), each level's tightest target dashed, the
 * current capacity marked (and the what-if capacity, when it differs).
 */
import { useMemo, useState } from 'react';
import type uPlot from 'uplot';

import { useDelayCurves, type CurveRange } from '@/api/get-delay-curves';
import {
  Chart,
  DELAY_CAPACITY_LAYOUT,
  drawMarker,
  seriesColour,
  type ChartData,
  type ChartOptions,
} from '@/components/ui/chart';
import { QueryErrorState, StateView } from '@/components/ui/states';
import { MODEL_LABELS, MODELS } from '@/lib/analysis';
import type { LinkDocument, Model } from '@/lib/api/schema';
import { formatRate } from '@/lib/format';

export function curveRange(doc: LinkDocument, capacityBps: number, whatIfBps?: number): CurveRange | null {
  const total = doc.slices.reduce((sum, s) => sum + s.rate_bps, 0);
  if (total <= 0) return null;
  const start = total * 1.0001;
  const stop = Math.max(3 * total, 1.5 * capacityBps, 1.2 * (whatIfBps ?? 0), start * 1.5);
  return { startBps: start, stopBps: stop, points: 160 };
}

interface LevelSeries {
  priority: number;
  label: string;
  colour: string;
  source: string;
  targetS: number;
}

export function levelSeries(doc: LinkDocument): LevelSeries[] {
  const names = doc.slices.map((s) => s.name);
  const levels = [...new Set(doc.slices.map((s) => s.priority))].sort((a, b) => b - a);
  return levels.map((priority) => {
    const members = doc.slices.filter((s) => s.priority === priority);
    const first = members[0];
    return {
      priority,
      label: `P${priority}: ${members.map((m) => m.name).join(' / ')}`,
      colour: seriesColour(first ? names.indexOf(first.name) : 0),
      source: first?.name ?? '',
      targetS: Math.min(...members.map((m) => m.delay_target_s ?? m.burst_limit_s ?? Infinity)),
    };
  });
}

export function DelayCapacityChart({
  doc,
  capacityBps,
  whatIfCapacityBps,
  defaultModel,
}: {
  doc: LinkDocument;
  capacityBps: number;
  whatIfCapacityBps?: number;
  defaultModel: Model;
}) {
  const [model, setModel] = useState<Model>(defaultModel);
  const range = curveRange(doc, capacityBps, whatIfCapacityBps);
  const curves = useDelayCurves(doc.slices.length ? doc : null, model, range);
  const levels = useMemo(() => levelSeries(doc), [doc]);

  const options = useMemo<ChartOptions>(() => {
    const series: uPlot.Series[] = [{ label: 'Capacity' }];
    for (const level of levels) {
      series.push({ label: level.label, stroke: level.colour, width: 2, spanGaps: false, value: (_u, v) => (v == null ? '—' : `${v.toPrecision(3)} ms`) });
    }
    for (const level of levels) {
      series.push({ label: `target P${level.priority}`, stroke: level.colour, width: 1, dash: [4, 4], points: { show: false }, value: (_u, v) => (v == null ? '—' : `${v.toPrecision(3)} ms`) });
    }
    return {
      ...DELAY_CAPACITY_LAYOUT,
      series,
      hooks: {
        draw: [
          (u: uPlot) => {
            drawMarker(u, capacityBps / 1e6, '#111827', `C = ${formatRate(capacityBps)}`, false);
            if (whatIfCapacityBps !== undefined && Math.abs(whatIfCapacityBps - capacityBps) > 1) {
              drawMarker(u, whatIfCapacityBps / 1e6, '#d97706', `what-if ${formatRate(whatIfCapacityBps)}`, true);
            }
          },
        ],
      },
    };
  }, [levels, capacityBps, whatIfCapacityBps]);

  const data = useMemo<ChartData | null>(() => {
    if (!curves.data) return null;
    const x = curves.data.capacities_bps.map((c) => c / 1e6);
    const lines = levels.map((level) =>
      (curves.data.delays_s[level.source] ?? []).map((d) => (d === null ? null : d * 1e3)),
    );
    const targets = levels.map((level) => x.map(() => level.targetS * 1e3));
    return [x, ...lines, ...targets] as ChartData;
  }, [curves.data, levels]);

  return (
    <div>
      <div className="row" style={{ justifyContent: 'space-between', marginBottom: 8 }}>
        <div className="segmented" role="group" aria-label="Delay model of the chart">
          {MODELS.map((m) => (
            <button key={m} type="button" aria-pressed={model === m} onClick={() => setModel(m)}>
              {MODEL_LABELS[m]}
            </button>
          ))}
        </div>
        {curves.isFetching && <span className="muted small">updating…</span>}
      </div>
      {doc.slices.length === 0 ? (
        <StateView kind="empty" compact title="No slices on this link" detail="The curves appear once a slice crosses it." />
      ) : curves.isError ? (
        <QueryErrorState compact error={curves.error} what="the delay curves" onRetry={() => void curves.refetch()} />
      ) : data === null ? (
        <StateView kind="loading" compact title="Computing the curves…" />
      ) : (
        <Chart
          options={options}
          data={data}
          height={300}
          label={`Worst-case delay of each priority level against link capacity, ${MODEL_LABELS[model]} model`}
          caption="Log scale. Each level's slices share one curve; dashed: the level's tightest delay target. Where a curve crosses its target is the least capacity for that level."
        />
      )}
    </div>
  );
}
