/**
 * The typed API client: `openapi-fetch` over the types generated from the OpenAPI document
 * (src/lib/api/schema.ts, by scripts/gen-api-client). Every request carries the bearer
 * token; a 401 ends the session. Errors are thrown as `ApiError` by `unwrap`.
 */
import createClient, { type Middleware } from 'openapi-fetch';

import { env } from '@/config/env';

import type { paths } from './api/schema';
import { ApiError, networkError, problemFrom } from './problem';
import { setSignOutReason, tokenStore } from './token-store';

export type { paths } from './api/schema';

const LOGIN_PATH = '/api/v1/login/access-token';

function authHeaders(headers: Headers): void {
  const session = tokenStore.get();
  if (session && !headers.has('Authorization')) {
    headers.set('Authorization', `Bearer ${session.token}`);
  }
}

function onUnauthorized(url: string): void {
  if (url.includes(LOGIN_PATH)) return;
  if (tokenStore.get()) {
    setSignOutReason('expired');
    tokenStore.clear();
  }
}

const auth: Middleware = {
  onRequest({ request }) {
    authHeaders(request.headers);
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

/**
 * An authorised fetch of a path that is not in the OpenAPI document yet (the telemetry,
 * alert and deploy endpoints). Only `src/features/live/api`, `src/features/alerts/api` and
 * the switch deploy calls use it; move them to `api` once the endpoints exist.
 */
export async function authorizedFetch(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  authHeaders(headers);
  let response: Response;
  try {
    response = await fetch(`${env.apiBaseUrl}${path}`, { ...init, headers });
  } catch (cause) {
    if (cause instanceof DOMException && cause.name === 'AbortError') throw cause;
    throw networkError(cause);
  }
  if (response.status === 401) onUnauthorized(path);
  return response;
}

/** `authorizedFetch` for JSON answers: the parsed body, or an ApiError. */
export async function requestJson<T>(path: string, init: RequestInit = {}): Promise<T> {
  const headers = new Headers(init.headers);
  headers.set('Accept', 'application/json');
  if (init.body !== undefined && !headers.has('Content-Type')) {
    headers.set('Content-Type', 'application/json');
  }
  const response = await authorizedFetch(path, { ...init, headers });
  const text = await response.text();
  let body: unknown = undefined;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
  }
  if (!response.ok) throw problemFrom(response.status, response.statusText, body);
  return body as T;
}
