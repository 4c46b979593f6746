import { reportFileName } from './download-report';

describe('reportFileName', () => {
  const generated_at = '2026-03-04T05:06:59Z';

  it('names files as the API does: scope, UTC minute, table', () => {
    expect(reportFileName({ scope: { kind: 'network', id: null, name: 'network' }, generated_at }, { format: 'pdf' })).toBe(
      'sliceportal-report-network-20260304T0506Z.pdf',
    );
    expect(reportFileName({ scope: { kind: 'link', id: 2, name: 's1/eth 2' }, generated_at }, { format: 'csv', table: 'findings' })).toBe(
      'sliceportal-report-s1-eth-2-20260304T0506Z-findings.csv',
    );
    expect(reportFileName({ scope: { kind: 'switch', id: 1, name: 's1' }, generated_at }, { format: 'json' })).toBe(
      'sliceportal-report-s1-20260304T0506Z.json',
    );
  });
});
