/**
 * Test helpers: render inside the app's providers and a memory router, and answer `fetch`
 * from a table of handlers (method + path pattern → JSON), recording every request.
 */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render } from '@testing-library/react';
import type { ReactElement } from 'react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { vi } from 'vitest';

import { CSRF_COOKIE, sessionStore } from '@/lib/session';

export interface Recorded {
  method: string;
  path: string;
  search: string;
  body: unknown;
}

export type Handler = (request: Recorded) => { status?: number; body?: unknown } | undefined;

export function json(body: unknown, status = 200): Response {
  const contentType = status >= 400 ? 'application/problem+json' : 'application/json';
  return new Response(status === 204 ? null : JSON.stringify(body), { status, headers: { 'Content-Type': contentType } });
}

/** Answer fetch with the first handler that returns something; 404 "Not Found" otherwise. */
export function mockFetch(routes: Record<string, Handler | Record<string, unknown> | unknown[]>): Recorded[] {
  const calls: Recorded[] = [];
  vi.spyOn(globalThis, 'fetch').mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = input instanceof Request ? input : new Request(String(input), init);
    const url = new URL(request.url);
    const text = await request.clone().text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    const recorded: Recorded = { method: request.method, path: url.pathname, search: url.search, body };
    calls.push(recorded);
    for (const [key, handler] of Object.entries(routes)) {
      const [method, pattern] = key.split(' ');
      if (method !== request.method) continue;
      const regex = new RegExp(`^${(pattern ?? '').replace(/\{[^}]+\}/g, '[^/]+')}$`);
      if (!regex.test(url.pathname)) continue;
      const answer = typeof handler === 'function' ? (handler as Handler)(recorded) : { body: handler };
      if (answer) return json(answer.body ?? null, answer.status ?? 200);
    }
    return json({ type: 'https://sliceportal.dev/problems/not-found', title: 'Not Found', status: 404, detail: 'Not Found' }, 404);
  });
  return calls;
}

export function renderWithProviders(ui: ReactElement, { route = '/', path = '*' }: { route?: string; path?: string } = {}) {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false, staleTime: Infinity }, mutations: { retry: false } } });
  const router = createMemoryRouter([{ path, element: ui }, { path: '*', element: <div>elsewhere</div> }], { initialEntries: [route] });
  return { queryClient, ...render(<QueryClientProvider client={queryClient}><RouterProvider router={router} /></QueryClientProvider>) };
}

/** Signed in as after a login: the CSRF cookie set (the session cookie is HttpOnly: unseen). */
export function signInForTests(): void {
  document.cookie = `${CSRF_COOKIE}=test-csrf; Path=/`;
  sessionStore.start();
}

export const now = '2026-01-01T00:00:00Z';

export function user(role: 'viewer' | 'operator' | 'admin') {
  return { id: 1, username: `${role}-1`, email: null, full_name: '', role, is_active: true, created_at: now };
}
