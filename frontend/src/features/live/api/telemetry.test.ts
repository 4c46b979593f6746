import { parseSample, parseSamples } from './telemetry';
import { backoffMs } from './use-telemetry-stream';

const wire = {
  t: 1767225600, slice_id: 4, throughput_bps: 47.5e6, drop_ratio: 0.001, mark_ratio: 0,
  vq_delay_p50_s: 0.001, vq_delay_p95_s: 0.004, vq_delay_p99_s: 0.008,
  rq_delay_p50_s: 0.0001, rq_delay_p95_s: null, rq_delay_p99_s: 0.0005,
  cdf: [{ le_s: 0.005, vq: 0.96, rq: 1 }, { le_s: 0.0001, vq: 0.1 }, { le_s: null, vq: 1 }],
};

it('reads a wire sample, sorting the CDF by delay', () => {
  const sample = parseSample(wire)!;
  expect(sample.throughputBps).toBe(47.5e6);
  expect(sample.vq.p99).toBe(0.008);
  expect(sample.rq.p95).toBeNull();
  expect(sample.cdf.map((p) => p.delayS)).toEqual([0.0001, 0.005, Infinity]);
  expect(sample.cdf[1]).toEqual({ delayS: 0.005, virtual: 0.96, real: 1 });
});

it('accepts ISO times and tuple CDFs, and skips what is not a sample', () => {
  const sample = parseSample({ ...wire, t: '2026-01-01T00:00:00Z', cdf: [[0.001, 0.5, 0.9]] })!;
  expect(sample.t).toBe(1767225600);
  expect(sample.cdf).toEqual([{ delayS: 0.001, virtual: 0.5, real: 0.9 }]);
  expect(parseSample({ t: 1 })).toBeNull();
  expect(parseSamples({ data: [wire, 'junk', { ...wire, t: 1 }] }).map((s) => s.t)).toEqual([1, 1767225600]);
});

it('backs off 1, 2, 4 … up to 15 s between reconnections', () => {
  expect([0, 1, 2, 3, 4, 10].map(backoffMs)).toEqual([1000, 2000, 4000, 8000, 15000, 15000]);
});

it("reads the backend's separate virtual and real CDFs", () => {
  const { cdf: _cdf, ...rest } = wire;
  const sample = parseSample({ ...rest, t: '2026-01-01T00:00:01Z', vq_cdf: [[0.0001, 0.2], [0.001, 0.9]], rq_cdf: [[0.0001, 1], [0.001, 1]] })!;
  expect(sample.cdf).toEqual([
    { delayS: 0.0001, virtual: 0.2, real: 1 },
    { delayS: 0.001, virtual: 0.9, real: 1 },
  ]);
});
