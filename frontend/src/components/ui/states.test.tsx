import { render, screen } from '@testing-library/react';

import { problemFrom } from '@/lib/problem';

import { QueryErrorState } from './states';

const problem = (status: number, detail: string) =>
  problemFrom(status, '', { type: 'https://sliceportal.dev/problems/x', title: 'T', status, detail });

it('designs forbidden, not-available-yet and error states', () => {
  const { rerender } = render(<QueryErrorState error={problem(403, 'this needs the admin role')} what="users" />);
  expect(screen.getByText('Your role may not see users')).toBeInTheDocument();
  rerender(<QueryErrorState error={problemFrom(404, 'Not Found', { detail: 'Not Found' })} what="alerts" />);
  expect(screen.getByText('Alerts: not available yet')).toBeInTheDocument();
  const retry = vi.fn();
  rerender(<QueryErrorState error={problem(503, 'the database cannot be reached now')} what="links" onRetry={retry} />);
  expect(screen.getByRole('alert')).toHaveTextContent('Could not load links');
  expect(screen.getByRole('alert')).toHaveTextContent('the database cannot be reached now');
  screen.getByRole('button', { name: 'Try again' }).click();
  expect(retry).toHaveBeenCalled();
});
