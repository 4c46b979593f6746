/**
 * A uPlot chart that fills its container's width. uPlot draws thousands of points per frame
 * on a canvas, which suits the 1 Hz live series; new data is pushed with `setData` without
 * rebuilding the chart; new options (other series) rebuild it.
 */
import { useEffect, useRef, type ReactNode } from 'react';
import uPlot from 'uplot';

import 'uplot/dist/uPlot.min.css';

export type ChartData = uPlot.AlignedData;
export type ChartOptions = Omit<uPlot.Options, 'width' | 'height'>;

export function Chart({
  options,
  data,
  height = 260,
  label,
  caption,
}: {
  options: ChartOptions;
  data: ChartData;
  height?: number;
  /** What the chart shows, for screen readers. */
  label: string;
  caption?: ReactNode;
}) {
  const container = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlot | null>(null);
  const latestData = useRef(data);

  useEffect(() => {
    const element = container.current;
    if (!element) return undefined;
    const width = Math.max(200, element.clientWidth || 600);
    const instance = new uPlot({ ...options, width, height }, latestData.current, element);
    chart.current = instance;
    const observer =
      typeof ResizeObserver === 'undefined'
        ? null
        : new ResizeObserver((entries) => {
            const entry = entries[0];
            if (entry && entry.contentRect.width > 0) {
              instance.setSize({ width: Math.floor(entry.contentRect.width), height });
            }
          });
    observer?.observe(element);
    return () => {
      observer?.disconnect();
      instance.destroy();
      chart.current = null;
    };
  }, [options, height]);

  useEffect(() => {
    latestData.current = data;
    chart.current?.setData(data);
  }, [data]);

  return (
    <figure className="chart">
      <div ref={container} role="img" aria-label={label} className="chart-canvas" />
      {caption && <figcaption className="chart-caption">{caption}</figcaption>}
    </figure>
  );
}

/** Colours of the chart series, readable on white and distinct for common colour blindness. */
export const SERIES_COLOURS = [
  '#1d4ed8',
  '#d97706',
  '#059669',
  '#be185d',
  '#7c3aed',
  '#0891b2',
  '#65a30d',
  '#b91c1c',
];

export function seriesColour(index: number): string {
  return SERIES_COLOURS[index % SERIES_COLOURS.length] ?? '#1d4ed8';
}

/** A delay-against-capacity chart (the paper's Fig. 15): log-scale delay in ms over Mbit/s. */
export const DELAY_CAPACITY_LAYOUT: Pick<ChartOptions, 'scales' | 'axes' | 'legend' | 'cursor'> = {
  scales: { x: { time: false }, y: { distr: 3, log: 10 } },
  axes: [
    { label: 'Link capacity (Mbit/s)', labelSize: 20, size: 40 },
    { label: 'Worst-case delay (ms)', labelSize: 20, size: 60 },
  ],
  legend: { show: true },
  cursor: { drag: { x: false, y: false } },
};

/** A labelled vertical line at x = `value` on the plot (a link's capacity, a what-if). */
export function drawMarker(u: uPlot, value: number, colour: string, text: string, dashed = false): void {
  const x = u.valToPos(value, 'x', true);
  if (!Number.isFinite(x) || x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
  const ctx = u.ctx;
  const ratio = window.devicePixelRatio || 1;
  ctx.save();
  ctx.strokeStyle = colour;
  ctx.fillStyle = colour;
  ctx.lineWidth = 2 * ratio;
  ctx.setLineDash(dashed ? [6 * ratio, 4 * ratio] : []);
  ctx.beginPath();
  ctx.moveTo(x, u.bbox.top);
  ctx.lineTo(x, u.bbox.top + u.bbox.height);
  ctx.stroke();
  ctx.font = `${12 * ratio}px system-ui, sans-serif`;
  ctx.fillText(text, x + 5 * ratio, u.bbox.top + 14 * ratio);
  ctx.restore();
}
