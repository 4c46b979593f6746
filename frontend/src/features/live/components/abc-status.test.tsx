import { act, screen, waitFor, within } from '@testing-library/react';

import type { AbcSettings } from '@/lib/api/schema';
import { FakeEventSource, installFakeEventSource } from '@/testing/fake-event-source';
import { mockFetch, renderWithProviders, signInForTests, user as userRow } from '@/testing/test-utils';

import { parseSample } from '../api/telemetry';

import { ABC_REGISTERS_UNREADABLE, abcStatus, aqmLabel, dropThresholdS } from './abc-status';
import { LiveSliceView } from './live-slice-view';

const wire = {
  t: '2026-01-01T00:00:00+00:00', slice_id: 4, switch_id: 1, downsampled: false, counters_reset: false, interval_s: 1,
  throughput_bps: 9e6, packets_per_s: 750, offered_bps: 12e6,
  drop_ratio: 0.25, vq_drop_ratio: 0.05, rq_drop_ratio: 0, aqm_drop_ratio: 0.2, mark_ratio: 0,
  vq_delay_p50_s: 0.005, vq_delay_p95_s: 0.0075, vq_delay_p99_s: 0.0075, vq_delay_max_bucket_s: 0.0075,
  rq_delay_p50_s: 0.001, rq_delay_p95_s: 0.001, rq_delay_p99_s: 0.001, rq_delay_max_bucket_s: 0.001,
  vq_cdf: [], rq_cdf: [],
  registers: { vq_delay_s: 0.006, vq_last_seen_ticks: 42 },
  codel: null,
  abc: {
    average_activity: 1.5,
    active_slots: 2,
    aggregates: [
      { slot: 9, rate_bps: 8e6, activity: 9.64, idle_s: 0 },
      { slot: 41, rate_bps: 2e5, activity: 4.32, idle_s: 2.5 },
    ],
  },
};
const sample = (changes: Record<string, unknown>) => parseSample({ ...wire, ...changes })!;
const settings: AbcSettings = {
  meter_memory_s: 3, average_memory_s: 0.3, reference_rate_bps: 1e4,
  q_min_s: 0.0072, q_base_s: 0.01, gamma_s: 0.0192, key: 'source_address', prefix_length: 32,
};

describe('abcStatus', () => {
  it("gives the latest sample's ABC state", () => {
    const found = abcStatus('abc', sample({}));
    expect(found).toEqual({ state: sample({}).abc });
  });

  it('says why when the switch cannot read registers (a raw sample without them)', () => {
    const bmv2 = sample({ registers: null, abc: null });
    expect(abcStatus('abc', bmv2)).toEqual({ reason: ABC_REGISTERS_UNREADABLE });
    expect(ABC_REGISTERS_UNREADABLE).toMatch(/cannot read registers.*p4lang\/PI#376.*ABC's drops are still counted, in the drops by reason/);
  });

  it('says nothing for other schemes, before a sample, or for a sum', () => {
    expect(abcStatus('codel', sample({}))).toBeNull();
    expect(abcStatus(undefined, sample({}))).toBeNull();
    expect(abcStatus('abc', undefined)).toBeNull();
    expect(abcStatus('abc', sample({ downsampled: true, registers: null, abc: null }))).toBeNull();
  });

  it("names the shared drop counter by the slice's scheme", () => {
    expect(aqmLabel('abc')).toBe('ABC');
    expect(aqmLabel('codel')).toBe('CoDel');
    expect(aqmLabel(undefined)).toBe('CoDel');
  });
});

describe('dropThresholdS', () => {
  it("is the paper's max(Q_min, Q_base - gamma (A - A_avg)), at most the burst limit", () => {
    expect(dropThresholdS(settings, 0.01, 1.5, 1.5)).toBeCloseTo(0.01); // average: Q_base
    expect(dropThresholdS(settings, 0.01, 1.6, 1.5)).toBeCloseTo(0.01 - 0.00192);
    expect(dropThresholdS(settings, 0.01, 9, 1.5)).toBeCloseTo(0.0072); // never below Q_min
    expect(dropThresholdS(settings, 0.01, -3, 1.5)).toBeCloseTo(0.01); // never above the burst limit
    expect(dropThresholdS({ ...settings, q_base_s: 0.005 }, 0.02, 1.0, 1.5)).toBeCloseTo(0.005 + 0.0096);
  });
});

describe('LiveSliceView of an abc slice', () => {
  beforeEach(() => {
    signInForTests();
    installFakeEventSource();
  });
  afterEach(() => vi.unstubAllGlobals());

  it('shows ABC drops by reason and the busiest aggregates with their activity, then why it cannot', async () => {
    mockFetch({ 'GET /api/v1/users/me': userRow('viewer') });
    renderWithProviders(
      <LiveSliceView sliceId={4} rateBps={10e6} targetS={0.01} boundS={0.003} scheme="abc" abc={settings} burstLimitS={0.01} />,
    );
    await waitFor(() => expect(FakeEventSource.instances).toHaveLength(1));
    const source = FakeEventSource.latest();
    act(() => source.open());
    act(() => source.emit('sample', wire));
    const state = await screen.findByTestId('abc-state');
    expect(screen.getByTestId('drops-by-reason')).toHaveTextContent(/burst limit 5 %.*real queue 0 %.*ABC 20 %/);
    expect(state).toHaveTextContent('average activity 1.50 · 2 of 64 aggregate slots');
    expect(state).toHaveTextContent('reference rate (10 kbit/s)');
    const rows = within(state).getAllByRole('row');
    expect(rows[1]).toHaveTextContent(/^9\s*8 Mbit\/s\s*9\.64\s*7\.2 ms\s*latest$/);
    expect(rows[2]).toHaveTextContent(/^41\s*200 kbit\/s\s*4\.32\s*7\.2 ms\s*2\.5 s before$/);
    act(() => source.emit('sample', { ...wire, t: '2026-01-01T00:00:01+00:00', registers: null, abc: null }));
    await waitFor(() => expect(screen.getByTestId('abc-state')).toHaveTextContent(/cannot read registers/));
  });

  it('says when no aggregate was metered yet, and leaves the thresholds out without the parameters', async () => {
    mockFetch({ 'GET /api/v1/users/me': userRow('viewer') });
    renderWithProviders(<LiveSliceView sliceId={4} rateBps={10e6} targetS={0.01} boundS={0.003} scheme="abc" />);
    await waitFor(() => expect(FakeEventSource.instances).toHaveLength(1));
    const source = FakeEventSource.latest();
    act(() => source.open());
    act(() => source.emit('sample', { ...wire, abc: { average_activity: 0, active_slots: 0, aggregates: [] } }));
    expect(await screen.findByTestId('abc-state')).toHaveTextContent('No aggregate metered yet.');
    act(() => source.emit('sample', { ...wire, t: '2026-01-01T00:00:01+00:00' }));
    await waitFor(() => expect(screen.getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['Slot', 'Rate', 'Activity', 'Last packet']));
  });
});
