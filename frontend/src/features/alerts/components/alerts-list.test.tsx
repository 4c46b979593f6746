import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { mockFetch, now, renderWithProviders, signInForTests } from '@/testing/test-utils';

import { AlertsList } from './alerts-list';

const alert = {
  id: 5, slice_id: 4, slice_name: 'DC', switch_id: 1, rule: 'throughput', state: 'firing',
  message: 'throughput 9.5 Mbit/s below the minimum 20 Mbit/s', value: 9.5e6, threshold: 20e6,
  started_at: now, resolved_at: null, acknowledged_at: null, acknowledged_by: null,
};

describe('AlertsList', () => {
  beforeEach(signInForTests);

  it('lists firing alerts by rule, linked to their slice, and acknowledges them', async () => {
    const calls = mockFetch({
      'GET /api/v1/alerts': { data: [alert], count: 1 },
      'POST /api/v1/alerts/5/ack': { ...alert, acknowledged_at: now, acknowledged_by: 1 },
    });
    const user = userEvent.setup();
    renderWithProviders(<AlertsList canAck />);
    expect(await screen.findByRole('link', { name: 'DC' })).toHaveAttribute('href', '/slices/4');
    expect(screen.getByText('throughput below minimum')).toBeInTheDocument();
    expect(calls.find((c) => c.path === '/api/v1/alerts')?.search).toContain('state=firing');
    await user.click(screen.getByRole('button', { name: 'Acknowledge' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'POST' && c.path === '/api/v1/alerts/5/ack')).toBe(true));
  });

  it('shows resolved alerts on their tab, and a designed state when the list fails', async () => {
    mockFetch({
      'GET /api/v1/alerts': (r) =>
        r.search.includes('resolved')
          ? { body: { data: [{ ...alert, state: 'resolved', resolved_at: now }], count: 1 } }
          : { status: 403, body: { title: 'Forbidden', status: 403, detail: 'no' } },
    });
    const user = userEvent.setup();
    renderWithProviders(<AlertsList canAck={false} />);
    expect(await screen.findByText('Your role may not see alerts')).toBeInTheDocument();
    await user.click(screen.getByRole('tab', { name: 'Resolved' }));
    expect(await screen.findByTestId('alert-row')).toHaveAttribute('data-state', 'resolved');
    expect(screen.queryByRole('button', { name: 'Acknowledge' })).toBeNull();
  });
});
