/**
 * A report as a file (PDF, JSON, or CSV of one table): the same GET as the page, with the
 * session cookie of the API client, saved from the blob under a name that says what it holds.
 */
import { useMutation } from '@tanstack/react-query';

import { unwrap } from '@/lib/api-client';

import { requestReport, type Report, type ReportRequest } from './get-report';

const EXTENSIONS = { json: 'json', csv: 'csv', pdf: 'pdf' } as const;

/**
 * The API's own naming (`sliceportal/api/routes/reports.py`), for JSON too:
 * `sliceportal-report-s1-eth2-20260101T1200Z-link_slices.csv`.
 */
export function reportFileName(report: Pick<Report, 'scope' | 'generated_at'>, request: Pick<ReportRequest, 'format' | 'table'>): string {
  const scope = report.scope.name.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^-+|-+$/g, '') || 'report';
  const at = new Date(report.generated_at);
  const pad = (n: number) => String(n).padStart(2, '0');
  const stamp = Number.isNaN(at.getTime())
    ? 'undated'
    : `${at.getUTCFullYear()}${pad(at.getUTCMonth() + 1)}${pad(at.getUTCDate())}T${pad(at.getUTCHours())}${pad(at.getUTCMinutes())}Z`;
  const table = request.format === 'csv' && request.table ? `-${request.table}` : '';
  return `sliceportal-report-${scope}-${stamp}${table}.${EXTENSIONS[request.format ?? 'json']}`;
}

export function saveBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const anchor = document.createElement('a');
  anchor.href = url;
  anchor.download = fileName;
  anchor.style.display = 'none';
  document.body.appendChild(anchor);
  anchor.click();
  anchor.remove();
  // Let the browser start the download before the URL goes.
  window.setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export async function downloadReport(request: ReportRequest, fileName: string): Promise<void> {
  const blob = (await unwrap(requestReport(request, 'blob'))) as Blob;
  saveBlob(blob, fileName);
}

export function useDownloadReport() {
  return useMutation({
    mutationFn: ({ request, fileName }: { request: ReportRequest; fileName: string }) =>
      downloadReport(request, fileName),
  });
}
