/**
 * RFC 9457 problem details as the API answers them, and the error every API call throws.
 *
 * The shapes are the OpenAPI document's `ProblemDetails` (every operation's `default`
 * response, generated into ./api/schema.ts), so they cannot drift from the server's.
 */

import type { ProblemDetails } from './api/schema';

/**
 * A problem as the API answers it, or as this client makes one for a network failure or a
 * body that is not a problem (those have no `instance`).
 */
export type Problem = Omit<ProblemDetails, 'instance'> & { instance?: string };

/** A fix a 409 admission-rejected proposes: a capacity, or a priority plan. */
export type AdmissionFix = NonNullable<ProblemDetails['fixes']>[number];

export const PROBLEM_BASE = 'https://sliceportal.dev/problems/';

export class ApiError extends Error {
  readonly status: number;
  readonly problem: Problem;

  constructor(problem: Problem) {
    super(problem.detail || problem.title);
    this.name = 'ApiError';
    this.status = problem.status;
    this.problem = problem;
  }

  /** The problem's kind: the last part of its `type` URI ('admission-rejected', …). */
  get kind(): string {
    return this.problem.type.startsWith(PROBLEM_BASE)
      ? this.problem.type.slice(PROBLEM_BASE.length)
      : this.problem.type;
  }

  get isAdmissionRejected(): boolean {
    return this.status === 409 && this.kind === 'admission-rejected';
  }

  /**
   * The server turned the request away before doing any of it (its request gate was full):
   * sending it again is safe, even for a change.
   */
  get isServerBusy(): boolean {
    return this.status === 503 && this.kind === 'server-busy';
  }

  /**
   * The endpoint does not exist on this server (yet): the router's bare 404 ("Not Found"),
   * not a 404 that names a missing object ("slice 7 does not exist"), or a 405/501.
   */
  get isMissingEndpoint(): boolean {
    if (this.status === 405 || this.status === 501) return true;
    return this.status === 404 && (this.kind !== 'not-found' || this.problem.detail === 'Not Found');
  }

  get isNetwork(): boolean {
    return this.status === 0;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Build the ApiError of a failed response from whatever body it had. */
export function problemFrom(status: number, statusText: string, body: unknown): ApiError {
  if (isRecord(body) && typeof body.title === 'string') {
    return new ApiError({
      ...(body as unknown as Problem),
      status,
      detail: typeof body.detail === 'string' ? body.detail : String(body.title),
      type: typeof body.type === 'string' ? body.type : 'about:blank',
    });
  }
  // FastAPI's own {"detail": "..."} (e.g. a route that does not exist: {"detail":"Not Found"}).
  const detail =
    isRecord(body) && typeof body.detail === 'string'
      ? body.detail
      : statusText || `HTTP ${status}`;
  return new ApiError({ type: 'about:blank', title: statusText || 'Error', status, detail });
}

export function networkError(cause: unknown): ApiError {
  const message = cause instanceof Error ? cause.message : String(cause);
  return new ApiError({
    type: 'about:blank',
    title: 'No connection',
    status: 0,
    detail: `the portal cannot be reached (${message})`,
  });
}

/**
 * Field errors of a 422 (or a 409 naming a field) keyed by form field: `body.rate_bps` →
 * `rate_bps`, `body.sla.max_delay_s` → `sla.max_delay_s`.
 */
export function fieldErrors(error: unknown): Record<string, string> {
  if (!(error instanceof ApiError)) return {};
  const found: Record<string, string> = {};
  const list = error.problem.errors ?? [];
  for (const item of list) {
    if (item.field === null) continue; // not one input's fault: errorMessage shows it
    const key = item.field.replace(/^body\./, '');
    found[key] ??= item.message;
  }
  if (error.problem.field) {
    const key = error.problem.field.replace(/^body\./, '');
    found[key] ??= error.problem.detail;
  }
  return found;
}

/** One line for a user: the problem's detail, or a plain message for other errors. */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.problem.detail || error.problem.title;
  if (error instanceof Error) return error.message;
  return String(error);
}
