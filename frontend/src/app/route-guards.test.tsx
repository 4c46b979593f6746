import { screen } from '@testing-library/react';

import { mockFetch, renderWithProviders, signInForTests, user } from '@/testing/test-utils';

import { ProtectedRoute, RequireRole } from './route-guards';

describe('role-restricted views', () => {
  it('shows a forbidden state to a viewer on an admin page', async () => {
    signInForTests();
    mockFetch({ 'GET /api/v1/users/me': user('viewer') });
    renderWithProviders(
      <ProtectedRoute>
        <RequireRole needs="admin">secret admin page</RequireRole>
      </ProtectedRoute>,
    );
    expect(await screen.findByText('This page is not for your role')).toBeInTheDocument();
    expect(screen.queryByText('secret admin page')).not.toBeInTheDocument();
  });

  it('lets an admin in', async () => {
    signInForTests();
    mockFetch({ 'GET /api/v1/users/me': user('admin') });
    renderWithProviders(
      <ProtectedRoute>
        <RequireRole needs="operator">operator page</RequireRole>
      </ProtectedRoute>,
    );
    expect(await screen.findByText('operator page')).toBeInTheDocument();
  });

  it('sends a signed-out visitor to the sign-in page', async () => {
    mockFetch({});
    renderWithProviders(<ProtectedRoute>inside</ProtectedRoute>, { route: '/slices', path: '/slices' });
    expect(await screen.findByText('elsewhere')).toBeInTheDocument();
  });
});
