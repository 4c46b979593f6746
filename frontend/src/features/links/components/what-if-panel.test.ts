import { applyScenario, baseScenario, isBase } from './what-if-panel';

const doc = {
  capacity_bps: 400e6,
  mtu_bytes: 1500,
  slices: [
    { name: 'DC', rate_bps: 48e6, priority: 7, burst_limit_s: 0.02, delay_target_s: 0.02 },
    { name: 'Peering', rate_bps: 240e6, priority: 6, burst_limit_s: 0.03, delay_target_s: 0.03 },
  ],
};

it('changes capacity, scales rates (bursts follow) and moves priorities', () => {
  const changed = applyScenario(doc, { capacityBps: 200e6, rateScale: 0.5, priorities: { Peering: 7 } });
  expect(changed.capacity_bps).toBe(200e6);
  expect(changed.slices.map((s) => [s.rate_bps, s.priority, s.burst_limit_s])).toEqual([
    [24e6, 7, 0.02],
    [120e6, 7, 0.03],
  ]);
  expect(doc.slices[1]?.priority).toBe(6);
});

it('knows the untouched scenario', () => {
  expect(isBase(baseScenario(400e6), 400e6)).toBe(true);
  expect(isBase({ ...baseScenario(400e6), rateScale: 2 }, 400e6)).toBe(false);
});
