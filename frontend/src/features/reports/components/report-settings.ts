/**
 * The report page's settings live in the URL (`/reports?link=5&growth=5&horizon=24&window=3600`)
 * so a report can be linked to, reloaded and printed as it is; the defaults are the API's.
 */
import type { ReportParameters, ReportScope } from '../api/get-report';

export interface ReportSettings {
  scope: ReportScope;
  parameters: ReportParameters;
}

/** The API's limits (`sliceportal/services/reports.py`). */
export const LIMITS = { growthPercent: 1000, horizonMonths: 120, windowS: 31 * 86400 };

export const DEFAULT_PARAMETERS: ReportParameters = {
  growth_percent: 5,
  horizon_months: 24,
  telemetry_window_s: 3600,
};

/** The telemetry windows offered (seconds; 0 = no telemetry). */
export const TELEMETRY_WINDOWS: { value: number; label: string }[] = [
  { value: 0, label: 'No telemetry' },
  { value: 900, label: 'Last 15 min' },
  { value: 3600, label: 'Last hour' },
  { value: 6 * 3600, label: 'Last 6 h' },
  { value: 24 * 3600, label: 'Last 24 h' },
  { value: 7 * 24 * 3600, label: 'Last 7 days' },
];

function id(text: string | null): number | null {
  if (!text || !/^\d+$/.test(text)) return null;
  const value = Number(text);
  return value > 0 && Number.isSafeInteger(value) ? value : null;
}

function number(text: string | null, fallback: number, valid: (value: number) => boolean): number {
  if (text === null || text.trim() === '') return fallback;
  const value = Number(text);
  return Number.isFinite(value) && valid(value) ? value : fallback;
}

export function settingsFromSearch(search: URLSearchParams): ReportSettings {
  const link = id(search.get('link'));
  const sw = id(search.get('switch'));
  const scope: ReportScope = link ? { kind: 'link', id: link } : sw ? { kind: 'switch', id: sw } : { kind: 'network' };
  return {
    scope,
    parameters: {
      growth_percent: number(search.get('growth'), DEFAULT_PARAMETERS.growth_percent, (v) => v >= 0 && v <= LIMITS.growthPercent),
      horizon_months: number(search.get('horizon'), DEFAULT_PARAMETERS.horizon_months, (v) => Number.isInteger(v) && v >= 1 && v <= LIMITS.horizonMonths),
      telemetry_window_s: number(search.get('window'), DEFAULT_PARAMETERS.telemetry_window_s, (v) => v >= 0 && v <= LIMITS.windowS),
    },
  };
}

/** The URL query of some settings; parameters at their defaults are left out. */
export function searchFromSettings({ scope, parameters }: ReportSettings): URLSearchParams {
  const search = new URLSearchParams();
  if (scope.kind !== 'network') search.set(scope.kind, String(scope.id));
  if (parameters.growth_percent !== DEFAULT_PARAMETERS.growth_percent) search.set('growth', String(parameters.growth_percent));
  if (parameters.horizon_months !== DEFAULT_PARAMETERS.horizon_months) search.set('horizon', String(parameters.horizon_months));
  if (parameters.telemetry_window_s !== DEFAULT_PARAMETERS.telemetry_window_s) search.set('window', String(parameters.telemetry_window_s));
  return search;
}
