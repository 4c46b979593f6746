/**
 * The capacity planning report: `GET /api/v1/reports/network`, `/reports/switches/{switch_id}`
 * or `/reports/links/{link_id}` (any signed-in user), as JSON. The document's shape is
 * `sliceportal/api/schemas/reports.py` (delays in s, rates in bit/s, bursts in bytes, `null` in
 * a bound = unbounded, in a capacity = none up to 1 Pbit/s works).
 */
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';

import type { Report } from '@/lib/api/schema';
import { api, unwrap } from '@/lib/api-client';

export type { Report };

export type ReportScope = { kind: 'network' } | { kind: 'switch' | 'link'; id: number };

/** The report's parameters, as the API names them. */
export interface ReportParameters {
  growth_percent: number;
  horizon_months: number;
  /** 0: no telemetry. */
  telemetry_window_s: number;
}

export type ReportFormat = 'json' | 'csv' | 'pdf';
export type ReportTable = 'links' | 'link_slices' | 'slices' | 'findings';

export interface ReportRequest {
  scope: ReportScope;
  parameters: ReportParameters;
  format?: ReportFormat;
  table?: ReportTable;
}

/** The GET of a report in any format, for its scope (`parseAs` 'blob' for the downloads). */
export function requestReport<P extends 'json' | 'blob'>(
  { scope, parameters, format, table }: ReportRequest,
  parseAs: P,
  signal?: AbortSignal,
) {
  const query = { ...parameters, ...(format ? { format } : {}), ...(table ? { table } : {}) };
  switch (scope.kind) {
    case 'network':
      return api.GET('/api/v1/reports/network', { params: { query }, parseAs, signal });
    case 'switch':
      return api.GET('/api/v1/reports/switches/{switch_id}', {
        params: { path: { switch_id: scope.id }, query },
        parseAs,
        signal,
      });
    case 'link':
      return api.GET('/api/v1/reports/links/{link_id}', {
        params: { path: { link_id: scope.id }, query },
        parseAs,
        signal,
      });
  }
}

export async function getReport(scope: ReportScope, parameters: ReportParameters, signal?: AbortSignal): Promise<Report> {
  return unwrap(requestReport({ scope, parameters }, 'json', signal)) as Promise<Report>;
}

export const getReportQueryOptions = (scope: ReportScope, parameters: ReportParameters) =>
  queryOptions({
    queryKey: ['reports', scope, parameters],
    queryFn: ({ signal }) => getReport(scope, parameters, signal),
    staleTime: 30_000,
  });

/** The report; the previous one stays on screen while a new scope or parameter loads. */
export function useReport(scope: ReportScope, parameters: ReportParameters) {
  return useQuery({ ...getReportQueryOptions(scope, parameters), placeholderData: keepPreviousData });
}
