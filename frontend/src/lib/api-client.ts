/**
 * The typed API client: `openapi-fetch` over the types generated from the OpenAPI document
 * (src/lib/api/schema.ts, by scripts/gen-api-client). Requests authenticate by the session
 * cookie (the browser sends it; no script sees the token); every change (POST, PATCH, DELETE)
 * carries the CSRF token in `X-CSRF-Token`; a 401 ends the session. Errors are thrown as
 * `ApiError` by `unwrap`.
 */
import createClient, { type Middleware } from 'openapi-fetch';

import { env } from '@/config/env';

import type { paths } from './api/schema';
import { ApiError, networkError, problemFrom } from './problem';
import { CSRF_HEADER, csrfToken, sessionStore, setSignOutReason } from './session';

export type { paths } from './api/schema';

const LOGIN_PATH = '/api/v1/login/access-token';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function csrfHeader(request: Request): void {
  const token = csrfToken();
  if (token && !SAFE_METHODS.has(request.method) && !request.headers.has(CSRF_HEADER)) {
    request.headers.set(CSRF_HEADER, token);
  }
}

function onUnauthorized(url: string): void {
  if (url.includes(LOGIN_PATH)) return;
  if (sessionStore.get()) {
    setSignOutReason('expired');
    sessionStore.end();
  }
}

const auth: Middleware = {
  onRequest({ request }) {
    csrfHeader(request);
    return request;
  },
  onResponse({ request, response }) {
    if (response.status === 401) onUnauthorized(request.url);
    return response;
  },
};

// `fetch` is looked up per request (not captured at start), so tests and polyfills can replace it.
export const api = createClient<paths>({
  baseUrl: env.apiBaseUrl,
  fetch: (request) => globalThis.fetch(request),
});
api.use(auth);

interface Result<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The data of a successful call, or an ApiError (network failures have status 0). */
export async function unwrap<T>(request: Promise<Result<T>>): Promise<T> {
  let result: Result<T>;
  try {
    result = await request;
  } catch (cause) {
    if (cause instanceof ApiError) throw cause;
    throw networkError(cause);
  }
  if (!result.response.ok) {
    throw problemFrom(result.response.status, result.response.statusText, result.error);
  }
  return result.data as T;
}
