import { mockFetch, signInForTests } from '@/testing/test-utils';

import { api, unwrap } from './api-client';
import { CSRF_COOKIE, csrfToken, sessionStore, takeSignOutReason } from './session';

function sent(): Request[] {
  return vi.mocked(globalThis.fetch).mock.calls.map(([input]) => input as Request);
}

describe('the API client and the cookie session', () => {
  it('sends the CSRF token on changes only, and never a bearer token', async () => {
    signInForTests();
    mockFetch({ 'GET /api/v1/users/me': {}, 'POST /api/v1/stream/ticket': {} });
    await unwrap(api.GET('/api/v1/users/me'));
    await unwrap(api.POST('/api/v1/stream/ticket'));
    const [read, change] = sent();
    expect(read?.headers.get('X-CSRF-Token')).toBeNull();
    expect(change?.headers.get('X-CSRF-Token')).toBe('test-csrf');
    for (const request of sent()) {
      expect(request.headers.get('Authorization')).toBeNull();
      expect(request.credentials).toBe('same-origin');
    }
  });

  it('ends the session on a 401 and forgets the CSRF token, keeping nothing in localStorage', async () => {
    signInForTests();
    expect(sessionStore.get()).toBe(true);
    mockFetch({ 'GET /api/v1/users/me': () => ({ status: 401, body: { title: 'Unauthorized', status: 401, detail: 'expired' } }) });
    await expect(unwrap(api.GET('/api/v1/users/me'))).rejects.toMatchObject({ status: 401 });
    expect(sessionStore.get()).toBe(false);
    expect(csrfToken()).toBeNull();
    expect(document.cookie).not.toContain(CSRF_COOKIE);
    expect(takeSignOutReason()).toBe('expired');
    expect(window.localStorage.length).toBe(0);
  });
});
