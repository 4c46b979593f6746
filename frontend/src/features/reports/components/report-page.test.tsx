import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { mockFetch, now, renderWithProviders, signInForTests } from '@/testing/test-utils';

import { reportFixture } from '../testing/report-fixture';

import { ReportPage } from './report-page';

const lists = {
  'GET /api/v1/switches': { data: [{ id: 1, name: 's1' }], count: 1 },
  'GET /api/v1/links': { data: [{ id: 1, switch_id: 1, name: 'eth1' }, { id: 2, switch_id: 1, name: 'eth2' }], count: 2 },
};

describe('ReportPage', () => {
  beforeEach(signInForTests);

  it('loads the network report with the default parameters and prints', async () => {
    const calls = mockFetch({ ...lists, 'GET /api/v1/reports/network': reportFixture });
    const print = vi.spyOn(window, 'print').mockImplementation(() => {});
    renderWithProviders(<ReportPage />, { route: '/reports' });
    expect(screen.getByText('Loading the report…')).toBeInTheDocument();
    expect(await screen.findByRole('heading', { name: 'Capacity report: network', level: 1 })).toBeInTheDocument();
    const search = new URLSearchParams(calls.find((c) => c.path === '/api/v1/reports/network')!.search);
    expect(Object.fromEntries(search)).toEqual({ growth_percent: '5', horizon_months: '24', telemetry_window_s: '3600' });
    expect(screen.getByText(/5 %\/month over 24 months · telemetry of the last 1 h/)).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Print' }));
    expect(print).toHaveBeenCalled();
  });

  it('scopes the report from the URL and applies new parameters', async () => {
    const calls = mockFetch({
      ...lists,
      'GET /api/v1/reports/links/{id}': { ...reportFixture, scope: { kind: 'link', id: 1, name: 's1/eth1' }, links: reportFixture.links.slice(0, 1) },
      'GET /api/v1/reports/network': reportFixture,
    });
    const user = userEvent.setup();
    renderWithProviders(<ReportPage />, { route: '/reports?link=1&horizon=12' });
    expect(await screen.findByRole('heading', { name: 'Capacity report: s1/eth1' })).toBeInTheDocument();
    expect(calls.find((c) => c.path === '/api/v1/reports/links/1')?.search).toContain('horizon_months=12');
    await waitFor(() => expect(screen.getByLabelText('Scope')).toHaveValue('link:1'));
    await user.clear(screen.getByLabelText('Growth'));
    await user.type(screen.getByLabelText('Growth'), '-1');
    await user.click(screen.getByRole('button', { name: 'Update report' }));
    expect(screen.getByText('From 0 to 1000 %')).toBeInTheDocument();
    await user.clear(screen.getByLabelText('Growth'));
    await user.type(screen.getByLabelText('Growth'), '10');
    await user.selectOptions(screen.getByLabelText('Telemetry'), 'No telemetry');
    await waitFor(() => expect(calls.some((c) => c.search.includes('telemetry_window_s=0'))).toBe(true));
    await user.click(screen.getByRole('button', { name: 'Update report' }));
    await waitFor(() => expect(calls.some((c) => c.path === '/api/v1/reports/links/1' && c.search.includes('growth_percent=10'))).toBe(true));
    await user.selectOptions(screen.getByLabelText('Scope'), 'Whole network');
    await waitFor(() => expect(calls.some((c) => c.path === '/api/v1/reports/network')).toBe(true));
  });

  it("shows the API's problem detail when the report fails", async () => {
    mockFetch({
      ...lists,
      'GET /api/v1/reports/switches/{id}': () => ({
        status: 404,
        body: { type: 'https://sliceportal.dev/problems/not-found', title: 'Not Found', status: 404, detail: 'switch 9 does not exist' },
      }),
    });
    renderWithProviders(<ReportPage />, { route: '/reports?switch=9' });
    expect(await screen.findByRole('alert')).toHaveTextContent('switch 9 does not exist');
  });

  it('downloads a CSV table with the session cookie and saves it under a clear name', async () => {
    const calls = mockFetch({
      ...lists,
      'GET /api/v1/reports/network': (r) => (r.search.includes('format=csv') ? { body: 'slice,link\n' } : { body: { ...reportFixture, generated_at: now } }),
    });
    const created = vi.fn((_blob: Blob) => 'blob:report');
    Object.assign(URL, { createObjectURL: created, revokeObjectURL: vi.fn() });
    const names: string[] = [];
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      names.push(this.download);
    });
    const user = userEvent.setup();
    renderWithProviders(<ReportPage />, { route: '/reports' });
    await user.click(await screen.findByRole('button', { name: 'Download CSV: slices per link' }));
    await waitFor(() => expect(names).toEqual(['sliceportal-report-network-20260101T0000Z-link_slices.csv']));
    const request = calls.find((c) => c.search.includes('format=csv'))!;
    expect(new URLSearchParams(request.search).get('table')).toBe('link_slices');
    const fetched = vi.mocked(globalThis.fetch).mock.calls.map(([input]) => input as Request);
    const download = fetched.find((r) => r.url.includes('format=csv'))!;
    expect(download.credentials).toBe('same-origin'); // the browser sends the session cookie
    expect(download.headers.get('Authorization')).toBeNull();
    expect(created).toHaveBeenCalledTimes(1);
  });
});
