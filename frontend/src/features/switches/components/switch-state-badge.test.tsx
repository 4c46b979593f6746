import { render, screen } from '@testing-library/react';

import type { SwitchPublic } from '@/lib/api/schema';

import { PipelineSync } from './switch-state-badge';

const sync = (overrides: Partial<NonNullable<SwitchPublic['sync']>> = {}): NonNullable<SwitchPublic['sync']> => ({
  pipeline_cookie: '0123456789abcdef',
  pipeline_in_sync: true,
  last_reconcile_at: '2026-11-26T12:00:00Z',
  last_contact_at: '2026-11-26T12:00:00Z',
  last_error: null,
  entries_desired: 1032,
  entries_installed: 1032,
  ...overrides,
});

it('shows a reachable switch in sync with its entries', () => {
  render(<PipelineSync sw={{ state: 'reachable', sync: sync() }} />);
  expect(screen.getByText('in sync')).toBeInTheDocument();
  expect(screen.getByText('1032/1032 entries')).toBeInTheDocument();
});

it('never shows an unreachable switch in sync, nor its last figure', () => {
  const { rerender } = render(
    <PipelineSync sw={{ state: 'unreachable', sync: sync({ pipeline_in_sync: null, entries_installed: null }) }} />,
  );
  expect(screen.queryByText('in sync')).not.toBeInTheDocument();
  expect(screen.getByText('unknown')).toBeInTheDocument();
  expect(screen.getByText('?/1032 entries')).toBeInTheDocument();
  rerender(<PipelineSync sw={{ state: 'unreachable', sync: sync() }} />); // an older API's answer
  expect(screen.queryByText('in sync')).not.toBeInTheDocument();
  expect(screen.queryByText('1032/1032 entries')).not.toBeInTheDocument();
});
