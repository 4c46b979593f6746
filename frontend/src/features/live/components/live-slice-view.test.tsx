import { act, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { FakeEventSource, installFakeEventSource } from '@/testing/fake-event-source';
import { mockFetch, renderWithProviders, signInForTests } from '@/testing/test-utils';

import { LiveSliceView } from './live-slice-view';

const sample = {
  t: '2026-01-01T00:00:00+00:00', slice_id: 4, switch_id: 1, downsampled: false, counters_reset: false, interval_s: 1,
  throughput_bps: 47.5e6, packets_per_s: 4000, offered_bps: 48e6,
  drop_ratio: 0.001, vq_drop_ratio: 0.001, rq_drop_ratio: 0, mark_ratio: 0.02,
  vq_delay_p50_s: 0.001, vq_delay_p95_s: 0.005, vq_delay_p99_s: 0.01, vq_delay_max_bucket_s: 0.01,
  rq_delay_p50_s: 0.0001, rq_delay_p95_s: 0.0005, rq_delay_p99_s: 0.0005, rq_delay_max_bucket_s: 0.001,
  vq_cdf: [[0.001, 0.5], [0.01, 1]], rq_cdf: [[0.001, 1], [0.01, 1]], registers: null,
};

const view = <LiveSliceView sliceId={4} rateBps={48e6} targetS={0.02} boundS={0.003} />;

describe('LiveSliceView', () => {
  beforeEach(() => {
    signInForTests();
    installFakeEventSource();
  });
  afterEach(() => vi.unstubAllGlobals());

  it('opens the stream with a ticket and shows the numbers of the samples it receives', async () => {
    const calls = mockFetch({ 'POST /api/v1/stream/ticket': { ticket: 'tk', expires_in: 60 } });
    renderWithProviders(view);
    await waitFor(() => expect(FakeEventSource.instances).toHaveLength(1));
    expect(calls.some((c) => c.method === 'POST' && c.path === '/api/v1/stream/ticket')).toBe(true);
    const source = FakeEventSource.latest();
    expect(source.url).toBe('http://portal.test/api/v1/slices/4/telemetry/stream?token=tk');
    act(() => source.open());
    expect(screen.getByTestId('stream-status')).toHaveAttribute('data-status', 'stale');
    act(() => source.emit('sample', sample));
    const numbers = await screen.findByTestId('live-numbers');
    expect(numbers).toHaveTextContent('47.5 Mbit/s');
    expect(numbers).toHaveTextContent('≤ 10 ms');
    expect(numbers).toHaveTextContent('≤ 500 µs');
    expect(numbers).toHaveTextContent('2 % ECN-marked');
    expect(screen.getByTestId('stream-status')).toHaveAttribute('data-status', 'live');
  });

  it('reconnects with a fresh ticket after the connection drops, at once on "Reconnect now"', async () => {
    let n = 0;
    mockFetch({ 'POST /api/v1/stream/ticket': () => ({ body: { ticket: `tk${++n}`, expires_in: 60 } }) });
    const user = userEvent.setup();
    renderWithProviders(view);
    await waitFor(() => expect(FakeEventSource.instances).toHaveLength(1));
    const first = FakeEventSource.latest();
    act(() => first.fail());
    expect(first.readyState).toBe(2);
    expect(screen.getByTestId('stream-status')).toHaveAttribute('data-status', 'reconnecting');
    await user.click(screen.getByRole('button', { name: 'Reconnect now' }));
    await waitFor(() => expect(FakeEventSource.instances).toHaveLength(2));
    expect(FakeEventSource.latest().url).toBe('http://portal.test/api/v1/slices/4/telemetry/stream?token=tk2');
  });

  it('says the role may not watch when the ticket is refused with 403', async () => {
    mockFetch({ 'POST /api/v1/stream/ticket': () => ({ status: 403, body: { title: 'Forbidden', status: 403, detail: 'no' } }) });
    renderWithProviders(view);
    expect(await screen.findByText('Your role may not watch this slice')).toBeInTheDocument();
    expect(FakeEventSource.instances).toHaveLength(0);
  });

  it('reads the history with start, end and resolution', async () => {
    const calls = mockFetch({
      'POST /api/v1/stream/ticket': { ticket: 'tk', expires_in: 60 },
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
