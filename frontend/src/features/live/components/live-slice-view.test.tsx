import { screen } from '@testing-library/react';

import { json, mockFetch, renderWithProviders, signInForTests } from '@/testing/test-utils';

import { LiveSliceView } from './live-slice-view';

describe('LiveSliceView', () => {
  beforeEach(signInForTests);

  it('says live telemetry is not available yet while the endpoint answers 404', async () => {
    mockFetch({});
    renderWithProviders(<LiveSliceView sliceId={4} rateBps={48e6} targetS={0.02} boundS={0.003} />);
    expect(await screen.findByText('Live telemetry is not available yet')).toBeInTheDocument();
    expect(screen.getByTestId('stream-status')).toHaveAttribute('data-status', 'unavailable');
  });

  it('shows the numbers of the samples it streams', async () => {
    const sample = { t: 1767225600, slice_id: 4, throughput_bps: 47.5e6, drop_ratio: 0.001, mark_ratio: 0.02, vq_delay_p50_s: 0.001, vq_delay_p95_s: 0.004, vq_delay_p99_s: 0.008, rq_delay_p50_s: 0.0001, rq_delay_p95_s: 0.0003, rq_delay_p99_s: 0.0005, cdf: [{ le_s: 0.001, vq: 0.5 }] };
    vi.spyOn(globalThis, 'fetch').mockImplementation(async (input) => {
      if (String(input).endsWith('/telemetry/stream')) {
        return new Response(`data: ${JSON.stringify(sample)}\n\n`, { headers: { 'Content-Type': 'text/event-stream' } });
      }
      return json({ detail: 'Not Found' }, 404);
    });
    renderWithProviders(<LiveSliceView sliceId={4} rateBps={48e6} targetS={0.02} boundS={0.003} />);
    const numbers = await screen.findByTestId('live-numbers');
    expect(numbers).toHaveTextContent('47.5 Mbit/s');
    expect(numbers).toHaveTextContent('8 ms');
    expect(numbers).toHaveTextContent('2 % ECN-marked');
  });
});
