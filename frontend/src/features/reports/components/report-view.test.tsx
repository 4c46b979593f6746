import { render, screen, within } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';

import type { Report } from '@/lib/api/schema';

import { reportFixture } from '../testing/report-fixture';

import { ReportView } from './report-view';

function renderReport(report: Report) {
  const router = createMemoryRouter([{ path: '*', element: <ReportView report={report} /> }]);
  return render(<RouterProvider router={router} />);
}

describe('ReportView', () => {
  it('shows the findings, recommendation first, before the links and slices', () => {
    renderReport(reportFixture);
    const findings = screen.getAllByTestId('finding');
    expect(findings.map((f) => f.dataset.severity)).toEqual(['critical', 'warning', 'info']);
    const first = findings[0]!;
    expect(within(first).getByText('critical')).toHaveClass('badge-bad');
    const recommendation = within(first).getByText(/^Move slice Enterprise to priority 7/);
    expect(recommendation).toHaveClass('finding-recommendation');
    expect(recommendation.compareDocumentPosition(within(first).getByText(/bound 23.2 ms above/)) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    const links = screen.getByRole('heading', { name: 'Links', level: 2 });
    expect(first.compareDocumentPosition(links) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
  });

  it('summarises counts per model and the tightest link', () => {
    renderReport(reportFixture);
    const summary = screen.getByTestId('report-summary');
    expect(summary).toHaveTextContent('2 · 3');
    expect(summary).toHaveTextContent('End-to-end misses1 · 2');
    expect(summary).toHaveTextContent('s1/eth1');
    expect(within(summary).getByText('1 critical')).toHaveClass('badge-bad');
  });

  it('puts both models side by side per slice, highlights misses, and reads null as unbounded or —', () => {
    renderReport(reportFixture);
    const table = screen.getByRole('table', { name: 'Slices on s1/eth1' });
    const rows = within(table).getAllByRole('row');
    const enterprise = rows.find((r) => within(r).queryByText('Enterprise'))!;
    expect(enterprise).toHaveClass('row-bad');
    expect(within(enterprise).getByText('23.2 ms')).toHaveClass('bound-bad');
    expect(within(enterprise).getByText('-13.2 ms')).toBeInTheDocument();
    const peering = rows.find((r) => within(r).queryByText('Peering'))!;
    const cells = within(peering).getAllByRole('cell').map((c) => c.textContent);
    // Slice, P, rate, burst, target, paper bound, paper slack, NC bound, NC slack.
    expect(cells.slice(1, 9)).toEqual(['6', '240 Mbit/s', '900 kB', '30 ms', '23.2 ms', '6.8 ms', 'unbounded (misses its target)', '—']);
    expect(within(rows.find((r) => within(r).queryByText('DC'))!).getByRole('link', { name: 'DC' })).toHaveAttribute('href', '/slices/11');
  });

  it("lays out the minimum capacities as the paper's Table III", () => {
    renderReport(reportFixture);
    const table = screen.getByRole('table', { name: 'Minimum capacity of s1/eth1' });
    const row = (name: string) => within(table).getByRole('row', { name: new RegExp(`^${name}`) });
    expect(row('As they are')).toHaveTextContent('870.7 Mbit/s890 Mbit/s');
    expect(within(row('All at one level')).getAllByRole('cell').map((c) => c.textContent)).toEqual(['1.656 Gbit/s', '—']);
    expect(row('Best plan \\(8 queues\\)')).toHaveTextContent('329.4 Mbit/s335 Mbit/s');
    expect(row("Best plan's priorities")).toHaveTextContent('DC 7 · Enterprise 7 · Peering 6proven least capacity');
    expect(row("Best plan's priorities")).toHaveTextContent('best found (search not exhaustive)');
  });

  it('gives margin, growth, admissibility and a chart per model for a link', () => {
    renderReport(reportFixture);
    const card = screen.getByRole('region', { name: 's1/eth1' });
    expect(within(card).getByText('Paper: not admissible')).toHaveClass('badge-bad');
    expect(card).toHaveTextContent('-470.7 Mbit/s short');
    expect(card).toHaveTextContent('already inadmissible');
    expect(card).toHaveTextContent('2.8 Gbit/s');
    expect(within(card).getAllByRole('img', { name: /against link capacity/ })).toHaveLength(2);
  });

  it('shows end-to-end bounds with the worst hop, headroom with its limit, and measured against declared', () => {
    renderReport(reportFixture);
    const e2e = screen.getByRole('table', { name: 'End-to-end bounds' });
    const cells = (name: string) => within(within(e2e).getByRole('row', { name: new RegExp(`^${name}`) })).getAllByRole('cell').map((c) => c.textContent);
    // Slice, P, links, target, admission bound and slack, paper bound and slack, NC bound and slack, worst hop.
    expect(cells('Peering').slice(3)).toEqual(['30 ms', '23.2 ms', '6.8 ms', '23.2 ms', '6.8 ms', 'unbounded (misses its target)', '—', 's1/eth1']);
    expect(cells('Enterprise')[3]).toBe('10 ms');
    expect(within(e2e).getByRole('row', { name: /^Enterprise/ })).toHaveClass('row-bad');
    expect(within(e2e).getByRole('row', { name: /^Peering/ })).not.toHaveClass('row-bad');
    const headroom = screen.getByRole('table', { name: 'Headroom and measurements' });
    expect(within(headroom).getByRole('row', { name: /^Peering/ })).toHaveTextContent('+20 Mbit/slimited by Enterprise on s1/eth1');
    expect(within(headroom).getByRole('row', { name: /^Peering/ })).toHaveTextContent('no samples in the window');
    const dc = within(headroom).getByRole('row', { name: /^DC/ });
    expect(dc).toHaveTextContent('— none today');
    expect(dc).toHaveTextContent('0.21× declared');
    expect(dc).toHaveTextContent('0.67× bound');
    expect(dc).toHaveTextContent('≤ 800 µs');
    expect(dc).toHaveTextContent('≥ 1.6 ms');
  });

  it('designs the empty states: a link without slices, a network without links', () => {
    const { unmount } = renderReport(reportFixture);
    const empty = screen.getByRole('region', { name: 's1/eth2' });
    expect(within(empty).getByText('No slice crosses this link')).toBeInTheDocument();
    expect(within(empty).queryByRole('table')).toBeNull();
    unmount();
    renderReport({ ...reportFixture, links: [], slices: [], findings: [] });
    expect(screen.getByText('No links in the network yet')).toBeInTheDocument();
  });
});
