import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { mockFetch, now, renderWithProviders, signInForTests } from '@/testing/test-utils';

import { AlertsList } from './alerts-list';

describe('AlertsList', () => {
  beforeEach(signInForTests);

  it('says alerts are not available yet while the endpoint answers 404', async () => {
    mockFetch({});
    renderWithProviders(<AlertsList canAck />);
    expect(await screen.findByText('Alerts: not available yet')).toBeInTheDocument();
  });

  it('lists firing alerts linked to their slice and acknowledges them', async () => {
    const calls = mockFetch({
      'GET /api/v1/alerts': [{ id: 5, slice_id: 4, slice_name: 'DC', kind: 'delay', severity: 'critical', state: 'firing', message: 'p99 24 ms above 20 ms', started_at: now }],
      'POST /api/v1/alerts/5/ack': { id: 5 },
    });
    const user = userEvent.setup();
    renderWithProviders(<AlertsList canAck />);
    expect(await screen.findByRole('link', { name: 'DC' })).toHaveAttribute('href', '/slices/4');
    await user.click(screen.getByRole('button', { name: 'Acknowledge' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'POST' && c.path === '/api/v1/alerts/5/ack')).toBe(true));
  });
});
