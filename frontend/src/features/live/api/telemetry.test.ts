import { backoffMs } from '@/lib/event-stream';

import { historyResolution } from './get-telemetry-history';
import { parseSample, parseSamples } from './telemetry';
import { streamUrl } from './use-telemetry-stream';

const wireSample = {
  t: '2026-01-01T00:00:00+00:00', slice_id: 4, switch_id: 1, downsampled: false, counters_reset: false, interval_s: 1,
  throughput_bps: 47.5e6, packets_per_s: 4000, offered_bps: 48e6,
  drop_ratio: 0.004, vq_drop_ratio: 0.001, rq_drop_ratio: 0, aqm_drop_ratio: 0.003, mark_ratio: 0.02,
  vq_delay_p50_s: 0.001, vq_delay_p95_s: 0.005, vq_delay_p99_s: 0.01, vq_delay_max_bucket_s: 0.01,
  rq_delay_p50_s: 0.0001, rq_delay_p95_s: null, rq_delay_p99_s: 0.0005, rq_delay_max_bucket_s: 0.001,
  vq_cdf: [[0.001, 0.5], [0.0001, 0.1], [0.005, 0.96]],
  rq_cdf: [[0.0001, 0.9], [0.0005, 1]],
  registers: null,
};

it("reads the API's sample, merging vq_cdf and rq_cdf over their edges", () => {
  const sample = parseSample(wireSample)!;
  expect(sample.t).toBe(1767225600);
  expect(sample.throughputBps).toBe(47.5e6);
  expect(sample.offeredBps).toBe(48e6);
  expect(sample.dropRatio).toBe(0.004);
  expect(sample.drops).toEqual({ burstLimit: 0.001, realQueue: 0, aqm: 0.003 });
  expect(sample.vq.p99).toBe(0.01);
  expect(sample.rq.p95).toBeNull();
  expect(sample.cdf).toEqual([
    { delayS: 0.0001, virtual: 0.1, real: 0.9 },
    { delayS: 0.0005, virtual: null, real: 1 },
    { delayS: 0.001, virtual: 0.5, real: null },
    { delayS: 0.005, virtual: 0.96, real: null },
  ]);
  expect(sample.edges).toEqual([0.0001, 0.0005, 0.001, 0.005]);
});

it("reads CoDel's state, and whether the switch read registers", () => {
  expect(parseSample(wireSample)!.codel).toBeNull();
  expect(parseSample(wireSample)!.registersRead).toBe(false); // a raw sample without registers
  const codel = parseSample({ ...wireSample, registers: { vq_delay_s: 0, vq_last_seen_ticks: 1 }, codel: { dropping: false, count: 3 } })!;
  expect(codel.codel).toEqual({ dropping: false, count: 3 });
  expect(codel.registersRead).toBe(true);
  expect(parseSample({ ...wireSample, downsampled: true })!.registersRead).toBeNull();
});

it("reads ABC's state, skipping a malformed one or aggregate", () => {
  expect(parseSample(wireSample)!.abc).toBeNull();
  const abc = {
    average_activity: 1.5,
    active_slots: 2,
    aggregates: [
      { slot: 9, rate_bps: 8e5, activity: 3, idle_s: 0 },
      { slot: 41, rate_bps: 'fast', activity: 1, idle_s: 0 },
    ],
  };
  expect(parseSample({ ...wireSample, abc })!.abc).toEqual({
    averageActivity: 1.5,
    activeSlots: 2,
    aggregates: [{ slot: 9, rateBps: 8e5, activity: 3, idleS: 0 }],
  });
  expect(parseSample({ ...wireSample, abc: { average_activity: 1.5 } })!.abc).toBeNull();
});

it('keeps an empty CDF without packets and skips what is not a sample', () => {
  expect(parseSample({ ...wireSample, vq_cdf: [], rq_cdf: [] })!.cdf).toEqual([]);
  expect(parseSample({ ...wireSample, vq_cdf: [], rq_cdf: [] })!.edges).toEqual([]);
  expect(parseSample({ t: 1 })).toBeNull();
  const later = { ...wireSample, t: '2026-01-01T00:00:01Z' };
  expect(parseSamples([later, 'junk', wireSample]).map((s) => s.t)).toEqual([1767225600, 1767225601]);
});

it('backs off 1, 2, 4 … up to 15 s between reconnections', () => {
  expect([0, 1, 2, 3, 4, 10].map(backoffMs)).toEqual([1000, 2000, 4000, 8000, 15000, 15000]);
});

it('opens the stream without a token in the URL and asks the history for at most 900 points', () => {
  expect(streamUrl(4)).toBe('http://portal.test/api/v1/slices/4/telemetry/stream');
  expect([60, 900, 3600, 86400].map(historyResolution)).toEqual([1, 1, 4, 96]);
});
