import { QueryClient, type DefaultOptions } from '@tanstack/react-query';

import { ApiError } from './problem';

/** Retry network failures and 5xx a few times; a 4xx answer will not change on retry. */
export function shouldRetry(failureCount: number, error: unknown): boolean {
  if (error instanceof ApiError && error.status >= 400 && error.status < 500) return false;
  return failureCount < 2;
}

/** A change is sent again only when the server refused it untouched (`server-busy`). */
export function shouldRetryMutation(failureCount: number, error: unknown): boolean {
  return error instanceof ApiError && error.isServerBusy && failureCount < 2;
}

/** The server asks for one second (Retry-After: 1); back off a little more each time. */
export function busyRetryDelay(attempt: number): number {
  return 1000 * (attempt + 1);
}

export const queryConfig = {
  queries: {
    retry: shouldRetry,
    retryDelay: (attempt) => Math.min(1000 * 2 ** attempt, 8000),
    staleTime: 10_000,
    refetchOnWindowFocus: true,
  },
  mutations: { retry: shouldRetryMutation, retryDelay: busyRetryDelay },
} satisfies DefaultOptions;

export function createQueryClient(): QueryClient {
  return new QueryClient({ defaultOptions: queryConfig });
}
