import { act, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { FakeEventSource, installFakeEventSource } from '@/testing/fake-event-source';
import { mockFetch, renderWithProviders, signInForTests, user as userRow } from '@/testing/test-utils';

import { parseSample } from '../api/telemetry';

import { formatBucket, LiveSliceView, p99AtTarget } from './live-slice-view';

/** The edges of a slice with a 20 ms delay target: T/16 … 7T/8, T. */
const EDGES = [0.00125, 0.0025, 0.005, 0.01, 0.015, 0.0175, 0.02];
const cdf = (fractions: number[]) => EDGES.map((edge, i) => [edge, fractions[i]]);

const sample = {
  t: '2026-01-01T00:00:00+00:00', slice_id: 4, switch_id: 1, downsampled: false, counters_reset: false, interval_s: 1,
  throughput_bps: 47.5e6, packets_per_s: 4000, offered_bps: 48e6,
  drop_ratio: 0.004, vq_drop_ratio: 0.001, rq_drop_ratio: 0, aqm_drop_ratio: 0.003, mark_ratio: 0.02,
  vq_delay_p50_s: 0.00125, vq_delay_p95_s: 0.005, vq_delay_p99_s: 0.01, vq_delay_max_bucket_s: 0.01,
  rq_delay_p50_s: 0.00125, rq_delay_p95_s: 0.00125, rq_delay_p99_s: 0.00125, rq_delay_max_bucket_s: 0.0025,
  vq_cdf: cdf([0.5, 0.9, 0.98, 1, 1, 1, 1]), rq_cdf: cdf([0.995, 1, 1, 1, 1, 1, 1]), registers: null,
};

const view = <LiveSliceView sliceId={4} rateBps={48e6} targetS={0.02} boundS={0.003} />;

describe('LiveSliceView', () => {
  beforeEach(() => {
    signInForTests();
    installFakeEventSource();
  });
  afterEach(() => vi.unstubAllGlobals());

  it('opens the stream after a session check and shows the numbers of the samples it receives', async () => {
    const calls = mockFetch({ 'GET /api/v1/users/me': userRow('viewer') });
    renderWithProviders(view);
    await waitFor(() => expect(FakeEventSource.instances).toHaveLength(1));
    expect(calls.some((c) => c.method === 'GET' && c.path === '/api/v1/users/me')).toBe(true);
    const source = FakeEventSource.latest();
    expect(source.url).toBe('http://portal.test/api/v1/slices/4/telemetry/stream');
    act(() => source.open());
    expect(screen.getByTestId('stream-status')).toHaveAttribute('data-status', 'stale');
    act(() => source.emit('sample', sample));
    const numbers = await screen.findByTestId('live-numbers');
    expect(numbers).toHaveTextContent('47.5 Mbit/s');
    expect(numbers).toHaveTextContent('≤ 10 ms');
    expect(numbers).toHaveTextContent('≤ 1.25 ms');
    expect(numbers).toHaveTextContent('2 % ECN-marked');
    expect(screen.getByTestId('drops-by-reason')).toHaveTextContent(/burst limit 0\.1 %.*real queue 0 %.*CoDel 0\.3 %/);
    expect(screen.getByTestId('stream-status')).toHaveAttribute('data-status', 'live');
  });

  it('reconnects after the connection drops, at once on "Reconnect now"', async () => {
    const calls = mockFetch({ 'GET /api/v1/users/me': userRow('viewer') });
    const user = userEvent.setup();
    renderWithProviders(view);
    await waitFor(() => expect(FakeEventSource.instances).toHaveLength(1));
    const first = FakeEventSource.latest();
    act(() => first.fail());
    expect(first.readyState).toBe(2);
    expect(screen.getByTestId('stream-status')).toHaveAttribute('data-status', 'reconnecting');
    await user.click(screen.getByRole('button', { name: 'Reconnect now' }));
    await waitFor(() => expect(FakeEventSource.instances).toHaveLength(2));
    expect(calls.filter((c) => c.path === '/api/v1/users/me')).toHaveLength(2);
  });

  it('says the role may not watch when the session check is refused with 403', async () => {
    mockFetch({ 'GET /api/v1/users/me': () => ({ status: 403, body: { title: 'Forbidden', status: 403, detail: 'no' } }) });
    renderWithProviders(view);
    expect(await screen.findByText('Your role may not watch this slice')).toBeInTheDocument();
    expect(FakeEventSource.instances).toHaveLength(0);
  });

  it('reads the history with start, end and resolution', async () => {
    const calls = mockFetch({
      'GET /api/v1/users/me': userRow('viewer'),
      'GET /api/v1/slices/4/telemetry': { data: [sample], count: 1, start: sample.t, end: sample.t, resolution_s: 4 },
    });
    const user = userEvent.setup();
    renderWithProviders(view);
    await user.click(screen.getByRole('button', { name: '1 h' }));
    expect(await screen.findByTestId('live-numbers')).toHaveTextContent('47.5 Mbit/s');
    const history = calls.find((c) => c.path === '/api/v1/slices/4/telemetry')!;
    const query = new URLSearchParams(history.search);
    expect(query.get('resolution')).toBe('4');
    expect(Date.parse(query.get('end')!) - Date.parse(query.get('start')!)).toBe(3600_000);
  });
});

describe('delays on the edges of each sample', () => {
  it('reads a percentile at the top edge as "at least the edge below"', () => {
    expect(formatBucket(0.01, EDGES)).toBe('≤ 10 ms');
    expect(formatBucket(0.02, EDGES)).toBe('≥ 17.5 ms');
    const peering = [0.001875, 0.00375, 0.0075, 0.015, 0.0225, 0.02625, 0.03];
    expect(formatBucket(0.02625, peering)).toBe('≤ 26.3 ms');
    expect(formatBucket(0.03, peering)).toBe('≥ 26.3 ms');
    expect(formatBucket(null, peering)).toBe('—');
  });

  it('flags a p99 proven at or above the target: more than 1 % of the packets in the top bucket', () => {
    const above = parseSample({ ...sample, vq_cdf: cdf([0.5, 0.9, 0.9, 0.95, 0.97, 0.98, 0.985]) })!;
    expect(p99AtTarget(above, 'virtual')).toBe(true);
    expect(p99AtTarget(above, 'real')).toBe(false);
    expect(p99AtTarget(parseSample(sample)!, 'virtual')).toBe(false);
    expect(p99AtTarget(parseSample({ ...sample, vq_cdf: [], rq_cdf: [] })!, 'virtual')).toBe(false);
  });
});
