import { act, screen, waitFor } from '@testing-library/react';

import { FakeEventSource, installFakeEventSource } from '@/testing/fake-event-source';
import { mockFetch, renderWithProviders, signInForTests, user as userRow } from '@/testing/test-utils';

import { parseSample } from '../api/telemetry';

import { codelStatus, REGISTERS_UNREADABLE } from './codel-status';
import { LiveSliceView } from './live-slice-view';

const wire = {
  t: '2026-01-01T00:00:00+00:00', slice_id: 4, switch_id: 1, downsampled: false, counters_reset: false, interval_s: 1,
  throughput_bps: 9e6, packets_per_s: 750, offered_bps: 12e6,
  drop_ratio: 0.25, vq_drop_ratio: 0, rq_drop_ratio: 0, aqm_drop_ratio: 0.25, mark_ratio: 0,
  vq_delay_p50_s: 0.005, vq_delay_p95_s: 0.0075, vq_delay_p99_s: 0.0075, vq_delay_max_bucket_s: 0.0075,
  rq_delay_p50_s: 0.001, rq_delay_p95_s: 0.001, rq_delay_p99_s: 0.001, rq_delay_max_bucket_s: 0.001,
  vq_cdf: [], rq_cdf: [],
  registers: { vq_delay_s: 0.006, vq_last_seen_ticks: 42 },
  codel: { dropping: true, count: 7 },
};
const sample = (changes: Record<string, unknown>) => parseSample({ ...wire, ...changes })!;

describe('codelStatus', () => {
  it("says whether CoDel drops, with the spell's count", () => {
    expect(codelStatus('codel', sample({}))).toBe('CoDel: dropping (count 7)');
    expect(codelStatus('codel', sample({ codel: { dropping: false, count: 7 } }))).toBe(
      "CoDel: not dropping (last spell's count 7)",
    );
    expect(codelStatus('codel', sample({ codel: { dropping: false, count: 0 } }))).toBe(
      'CoDel: not dropping (no drop spell yet)',
    );
  });

  it('says why when the switch cannot read registers (a raw sample without them)', () => {
    const bmv2 = sample({ registers: null, codel: null });
    expect(bmv2.registersRead).toBe(false);
    expect(codelStatus('codel', bmv2)).toBe(REGISTERS_UNREADABLE);
    expect(REGISTERS_UNREADABLE).toMatch(/cannot read registers.*p4lang\/PI#376.*drops are still counted, in the drops by reason/);
  });

  it('says nothing for other schemes, before a sample, or for a sum', () => {
    expect(codelStatus('tail_drop', sample({}))).toBeNull();
    expect(codelStatus(undefined, sample({}))).toBeNull();
    expect(codelStatus('codel', undefined)).toBeNull();
    const bucket = sample({ downsampled: true, registers: null, codel: null });
    expect(bucket.registersRead).toBeNull();
    expect(codelStatus('codel', bucket)).toBeNull();
  });

  it('ignores a malformed state', () => {
    expect(sample({ codel: { dropping: 'yes', count: 7 } }).codel).toBeNull();
    expect(sample({ codel: { dropping: true } }).codel).toBeNull();
  });
});

describe('LiveSliceView of a codel slice', () => {
  beforeEach(() => {
    signInForTests();
    installFakeEventSource();
  });
  afterEach(() => vi.unstubAllGlobals());

  it("shows CoDel's state of the latest sample, then why it cannot", async () => {
    mockFetch({ 'GET /api/v1/users/me': userRow('viewer') });
    renderWithProviders(<LiveSliceView sliceId={4} rateBps={10e6} targetS={0.01} boundS={0.003} scheme="codel" />);
    await waitFor(() => expect(FakeEventSource.instances).toHaveLength(1));
    const source = FakeEventSource.latest();
    act(() => source.open());
    act(() => source.emit('sample', wire));
    expect(await screen.findByTestId('codel-state')).toHaveTextContent('CoDel: dropping (count 7)');
    act(() => source.emit('sample', { ...wire, t: '2026-01-01T00:00:01+00:00', registers: null, codel: null }));
    await waitFor(() => expect(screen.getByTestId('codel-state')).toHaveTextContent(/cannot read registers/));
  });
});
