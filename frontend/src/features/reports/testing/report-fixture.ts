/**
 * A network report as the API answers it, typed by the generated client: link s1/eth1 at
 * 400 Mbit/s with the paper's DC (P7) and Enterprise and Peering (P6), where Enterprise misses
 * its 10 ms target; Peering's network-calculus bound is unbounded; link s1/eth2 carries nothing.
 * The numbers exercise the rendering (every null, every state); they are not one consistent
 * computation.
 */
import type { Report } from '@/lib/api/schema';

const MBIT = 1e6;
const ms = (value: number) => value / 1e3;

export const reportFixture: Report = {
  scope: { kind: 'network', id: null, name: 'network' },
  generated_at: '2026-01-01T12:00:00Z',
  parameters: { growth_percent_per_month: 5, horizon_months: 24, telemetry_window_s: 3600 },
  summary: {
    links: 2,
    slices: 3,
    inadmissible_links: { harkous: 1, netcalc: 1 },
    e2e_violations: { harkous: 1, netcalc: 2 },
    findings: { critical: 1, warning: 1, info: 1 },
    tightest_link: 's1/eth1',
  },
  findings: [
    {
      severity: 'critical',
      subject: 'link s1/eth1',
      finding: 'Enterprise: bound 23.2 ms above its 10 ms target (busy period (paper)).',
      recommendation: 'Move slice Enterprise to priority 7 (or raise the capacity to 870.7 Mbit/s).',
      action: { kind: 'move-slice', link: 's1/eth1', slice: 'Enterprise', priority: 7 },
    },
    {
      severity: 'warning',
      subject: 'slice Peering',
      finding: 'Measured peak 252 Mbit/s is 1.05× its declared 240 Mbit/s.',
      recommendation: 'Investigate the traffic of Peering.',
      action: { kind: 'investigate', slice: 'Peering' },
    },
    {
      severity: 'info',
      subject: 'link s1/eth2',
      finding: 'No slice crosses this link.',
      recommendation: 'Nothing to do.',
      action: { kind: 'none', link: 's1/eth2' },
    },
  ],
  links: [
    {
      id: 1,
      name: 's1/eth1',
      switch: 's1',
      capacity_bps: 400 * MBIT,
      model: 'harkous',
      queue_count: 8,
      mtu_bytes: 1500,
      total_rate_bps: 300 * MBIT,
      utilisation: 0.75,
      admissible: { harkous: false, netcalc: false },
      slices: [
        {
          slice_id: 11, name: 'DC', priority: 7, rate_bps: 48 * MBIT, burst_bytes: 120_000, delay_target_s: ms(20),
          bound_s: { harkous: ms(2.4), netcalc: ms(2.43) },
          slack_s: { harkous: ms(17.6), netcalc: ms(17.57) },
          meets_target: { harkous: true, netcalc: true },
        },
        {
          slice_id: 12, name: 'Enterprise', priority: 6, rate_bps: 12 * MBIT, burst_bytes: 15_000, delay_target_s: ms(10),
          bound_s: { harkous: ms(23.2), netcalc: ms(23.8) },
          slack_s: { harkous: ms(-13.2), netcalc: ms(-13.8) },
          meets_target: { harkous: false, netcalc: false },
        },
        {
          slice_id: 13, name: 'Peering', priority: 6, rate_bps: 240 * MBIT, burst_bytes: 900_000, delay_target_s: ms(30),
          bound_s: { harkous: ms(23.2), netcalc: null },
          slack_s: { harkous: ms(6.8), netcalc: null },
          meets_target: { harkous: true, netcalc: false },
        },
      ],
      min_capacity_bps: {
        current: { harkous: 870.7 * MBIT, netcalc: 890 * MBIT },
        one_level: { harkous: 1656 * MBIT, netcalc: null },
        best_plan: {
          harkous: { capacity_bps: 329.4 * MBIT, priorities: { DC: 7, Enterprise: 7, Peering: 6 }, exhaustive: true },
          netcalc: { capacity_bps: 335 * MBIT, priorities: { DC: 7, Enterprise: 7, Peering: 6 }, exhaustive: false },
        },
      },
      capacity_margin_bps: -470.7 * MBIT,
      curves: {
        capacity_bps: [310 * MBIT, 400 * MBIT, 900 * MBIT],
        bound_s: {
          harkous: { DC: [ms(3.1), ms(2.4), ms(1.07)], Enterprise: [null, ms(23.2), ms(9.6)], Peering: [null, ms(23.2), ms(9.6)] },
          netcalc: { DC: [ms(3.2), ms(2.43), ms(1.1)], Enterprise: [null, ms(23.8), ms(9.9)], Peering: [null, null, ms(9.9)] },
        },
      },
      growth: { months_until_inadmissible: 0, rate_factor_limit: null, capacity_at_horizon_bps: 2.8e9 },
    },
    {
      id: 2,
      name: 's1/eth2',
      switch: 's1',
      capacity_bps: 1e9,
      model: 'netcalc',
      queue_count: 8,
      mtu_bytes: 1500,
      total_rate_bps: 0,
      utilisation: 0,
      admissible: { harkous: true, netcalc: true },
      slices: [],
      min_capacity_bps: {
        current: { harkous: 0, netcalc: 0 },
        one_level: { harkous: 0, netcalc: 0 },
        best_plan: {
          harkous: { capacity_bps: 0, priorities: {}, exhaustive: true },
          netcalc: { capacity_bps: 0, priorities: {}, exhaustive: true },
        },
      },
      capacity_margin_bps: 1e9,
      curves: { capacity_bps: [], bound_s: { harkous: {}, netcalc: {} } },
      growth: { months_until_inadmissible: null, rate_factor_limit: null, capacity_at_horizon_bps: 0 },
    },
  ],
  slices: [
    {
      id: 11, name: 'DC', priority: 7, rate_bps: 48 * MBIT, burst_limit_s: ms(20), burst_bytes: 120_000,
      delay_target_s: ms(20), e2e_delay_target_s: ms(20), links: ['s1/eth1'],
      e2e: {
        harkous: { total_s: ms(2.4), target_s: ms(20), meets_target: true, slack_s: ms(17.6), worst_hop: 's1/eth1' },
        netcalc: { total_s: ms(2.43), target_s: ms(20), meets_target: true, slack_s: ms(17.57), worst_hop: 's1/eth1' },
      },
      e2e_enforced: { total_s: ms(2.4), target_s: ms(20), meets_target: true, slack_s: ms(17.6), worst_hop: 's1/eth1' },
      headroom: { rate_bps: null, burst_bytes: null, rate_limited_by: null, burst_limited_by: null },
      measured: {
        window_s: 3600, peak_rate_bps: 10 * MBIT, mean_rate_bps: 9.8 * MBIT,
        delay_p50_s: ms(0.1), delay_p95_s: ms(0.4), delay_p99_s: ms(0.8), delay_max_s: ms(1.6),
        loss_ratio: 0, peak_rate_vs_declared: 10 / 48, delay_max_vs_bound: 1.6 / 2.4,
      },
    },
    {
      id: 12, name: 'Enterprise', priority: 6, rate_bps: 12 * MBIT, burst_limit_s: ms(10), burst_bytes: 15_000,
      delay_target_s: ms(10), e2e_delay_target_s: null, links: ['s1/eth1'],
      e2e: {
        harkous: { total_s: ms(23.2), target_s: ms(10), meets_target: false, slack_s: ms(-13.2), worst_hop: 's1/eth1' },
        netcalc: { total_s: ms(23.8), target_s: ms(10), meets_target: false, slack_s: ms(-13.8), worst_hop: 's1/eth1' },
      },
      e2e_enforced: { total_s: ms(23.2), target_s: ms(10), meets_target: false, slack_s: ms(-13.2), worst_hop: 's1/eth1' },
      headroom: { rate_bps: null, burst_bytes: null, rate_limited_by: null, burst_limited_by: null },
      measured: null,
    },
    {
      id: 13, name: 'Peering', priority: 6, rate_bps: 240 * MBIT, burst_limit_s: ms(30), burst_bytes: 900_000,
      delay_target_s: ms(30), e2e_delay_target_s: null, links: ['s1/eth1'],
      e2e: {
        harkous: { total_s: ms(23.2), target_s: ms(30), meets_target: true, slack_s: ms(6.8), worst_hop: 's1/eth1' },
        netcalc: { total_s: null, target_s: ms(30), meets_target: false, slack_s: null, worst_hop: 's1/eth1' },
      },
      e2e_enforced: { total_s: ms(23.2), target_s: ms(30), meets_target: true, slack_s: ms(6.8), worst_hop: 's1/eth1' },
      headroom: { rate_bps: 20 * MBIT, burst_bytes: 30_000, rate_limited_by: 'Enterprise on s1/eth1', burst_limited_by: 'Peering on s1/eth1' },
      measured: null,
    },
  ],
};
