import { api, unwrap } from '@/lib/api-client';

/**
 * A ticket that opens streams for 60 s, passed as `?token=` (EventSource cannot send the
 * bearer header; an access token is refused in a URL).
 */
export function createStreamTicket(signal?: AbortSignal) {
  return unwrap(api.POST('/api/v1/stream/ticket', { signal }));
}
