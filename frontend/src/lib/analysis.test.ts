import { linkDocument, priorityLevels, sliceDoc, sliceLevels, violationReason, worstSlack } from './analysis';
import type { LinkAnalysis } from './api/schema';

const MBIT = 1e6;
// The paper's slices, case C (DC and Enterprise 7, Peering 6) on 330 Mbit/s.
const doc = linkDocument({ capacity_bps: 330 * MBIT, mtu_bytes: 1500 }, [
  { name: 'DC', rate_bps: 48 * MBIT, priority: 7, burst_limit_s: 0.02, delay_target_s: 0.02 },
  { name: 'Enterprise', rate_bps: 12 * MBIT, priority: 7, burst_limit_s: 0.01, delay_target_s: 0.01 },
  { name: 'Peering', rate_bps: 240 * MBIT, priority: 6, burst_limit_s: 0.03, delay_target_s: 0.03 },
]);
const bound = (name: string, priority: number, d: number | null, target: number, residual: number) => ({
  name, priority, burst_bytes: 0, residual_capacity_bps: residual, worst_case_delay_s: d, delay_target_s: target,
  meets_target: d !== null && d <= target, slack_s: d === null ? null : target - d,
});
const analysis: LinkAnalysis = {
  model: 'harkous', capacity_bps: 330 * MBIT, admissible: true, total_rate_bps: 300 * MBIT,
  slices: [bound('DC', 7, 0.00327, 0.02, 330 * MBIT), bound('Enterprise', 7, 0.00327, 0.01, 330 * MBIT), bound('Peering', 6, 0.02727, 0.03, 270 * MBIT)],
};

it('builds the analytics document of stored slices as admission does', () => {
  expect(sliceDoc({ name: 'a', rate_bps: 1, priority: 3, burst_limit_s: 0.1, delay_target_s: 0.2, max_packet_bytes: null })).toEqual({
    name: 'a', rate_bps: 1, priority: 3, burst_limit_s: 0.1, delay_target_s: 0.2,
  });
  expect(doc.capacity_bps).toBe(330 * MBIT);
  expect(doc).not.toHaveProperty('frame_overhead_bytes');
  const lineRate = linkDocument({ capacity_bps: 1e9, mtu_bytes: 1500, frame_overhead_bytes: 24 }, []);
  expect(lineRate).toEqual({ capacity_bps: 1e9, mtu_bytes: 1500, frame_overhead_bytes: 24, slices: [] });
});

it('leaves best effort one queue: a link with n queues gives its slices n - 1 levels', () => {
  expect([2, 3, 8].map(sliceLevels)).toEqual([1, 2, 7]);
});

it('stacks the slice levels from 7 down to 1 with the residual capacity of each (eq. 2)', () => {
  const levels = priorityLevels(doc, 330 * MBIT, analysis);
  expect(levels.map((l) => l.priority)).toEqual([7, 6, 5, 4, 3, 2, 1]);
  expect(levels[0]?.residualBps).toBe(330 * MBIT);
  expect(levels[1]?.residualBps).toBe(270 * MBIT);
  expect(levels[2]?.residualBps).toBe(30 * MBIT);
  expect(levels[0]?.slices.map((s) => s.name)).toEqual(['DC', 'Enterprise']);
  expect(levels[1]?.boundS).toBeCloseTo(0.02727);
  expect(levels[2]?.boundS).toBeUndefined();
});

it('finds the worst slack (null when a slice is unbounded)', () => {
  expect(worstSlack(analysis)).toBeCloseTo(0.00273);
  expect(worstSlack({ slices: [] })).toBeUndefined();
  expect(worstSlack({ slices: [bound('x', 1, null, 1, 0)] })).toBeNull();
});

it('explains a violation in the API\'s words', () => {
  expect(violationReason(bound('Enterprise', 7, 0.0207, 0.01, 400 * MBIT), doc, 400 * MBIT)).toBe('worst-case delay 20.7 ms exceeds target 10 ms');
  expect(violationReason(bound('Peering', 6, null, 0.03, 270 * MBIT), doc, 250 * MBIT)).toBe('rate limits exceed capacity by 50 Mbit/s');
  expect(violationReason(bound('DC', 7, 0.001, 0.02, 1), doc, 330 * MBIT)).toBeNull();
});
