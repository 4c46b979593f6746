/** Print the page, or download the report as PDF, JSON or one CSV per table. */
import { Button } from '@/components/ui/button';
import { Notice } from '@/components/ui/notice';
import { errorMessage } from '@/lib/problem';

import { reportFileName, useDownloadReport } from '../api/download-report';
import type { Report, ReportFormat, ReportRequest, ReportTable } from '../api/get-report';

interface Download {
  label: string;
  format: ReportFormat;
  table?: ReportTable;
}

const DOWNLOADS: Download[] = [
  { label: 'PDF', format: 'pdf' },
  { label: 'JSON', format: 'json' },
  { label: 'CSV: links', format: 'csv', table: 'links' },
  { label: 'CSV: slices per link', format: 'csv', table: 'link_slices' },
  { label: 'CSV: slices', format: 'csv', table: 'slices' },
  { label: 'CSV: findings', format: 'csv', table: 'findings' },
];

export function ReportActions({ report, request }: { report: Report; request: Omit<ReportRequest, 'format' | 'table'> }) {
  const download = useDownloadReport();
  const pending = download.isPending ? download.variables.request : null;
  return (
    <div className="report-actions no-print">
      <div className="row" role="group" aria-label="Download the report">
        <Button variant="primary" onClick={() => window.print()}>
          Print
        </Button>
        {DOWNLOADS.map((d) => (
          <Button
            key={d.label}
            size="sm"
            busy={pending?.format === d.format && pending.table === d.table}
            disabled={download.isPending}
            aria-label={`Download ${d.label}`}
            onClick={() =>
              download.mutate({
                request: { ...request, format: d.format, ...(d.table ? { table: d.table } : {}) },
                fileName: reportFileName(report, d),
              })
            }
          >
            {d.label}
          </Button>
        ))}
      </div>
      {download.isError && (
        <Notice tone="bad" title="Download failed">
          {errorMessage(download.error)}
        </Notice>
      )}
    </div>
  );
}
