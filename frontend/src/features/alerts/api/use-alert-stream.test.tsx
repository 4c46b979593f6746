import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, renderHook, waitFor } from '@testing-library/react';
import type { ReactNode } from 'react';

import { FakeEventSource, installFakeEventSource } from '@/testing/fake-event-source';
import { mockFetch, signInForTests, user } from '@/testing/test-utils';

import { getAlertsQueryOptions } from './get-alerts';
import { useAlertStream } from './use-alert-stream';

const alert = {
  id: 5, slice_id: 4, slice_name: 'DC', switch_id: 1, rule: 'throughput', state: 'firing',
  message: 'throughput 9.5 Mbit/s below the minimum 20 Mbit/s', value: 9.5e6, threshold: 20e6,
  started_at: '2026-01-01T00:00:00Z', resolved_at: null, acknowledged_at: null, acknowledged_by: null,
};

function renderStream() {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false, staleTime: Infinity } } });
  const wrapper = ({ children }: { children: ReactNode }) => <QueryClientProvider client={queryClient}>{children}</QueryClientProvider>;
  return { queryClient, ...renderHook(() => useAlertStream(), { wrapper }) };
}

/** Let the fake clock run `ms` and the session check's fetch settle. */
async function advance(ms: number) {
  await act(() => vi.advanceTimersByTimeAsync(ms));
}

describe('useAlertStream', () => {
  beforeEach(() => {
    signInForTests();
    installFakeEventSource();
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  it('opens /api/v1/stream after a session check and invalidates the alerts on every alert event', async () => {
    const calls = mockFetch({ 'GET /api/v1/users/me': user('viewer') });
    const { queryClient, result } = renderStream();
    const firing = getAlertsQueryOptions({ state: 'firing' }).queryKey;
    queryClient.setQueryData(firing, { data: [], count: 0 });
    const invalidate = vi.spyOn(queryClient, 'invalidateQueries');
    await waitFor(() => expect(FakeEventSource.instances).toHaveLength(1));
    expect(calls.some((c) => c.method === 'GET' && c.path === '/api/v1/users/me')).toBe(true);
    const source = FakeEventSource.latest();
    expect(source.url).toBe('http://portal.test/api/v1/stream?events=alert'); // the cookie, no token
    act(() => source.open());
    expect(result.current).toBe('live');
    expect(invalidate).not.toHaveBeenCalled();

    act(() => source.emit('samples', [{ slice_id: 4 }]));
    expect(invalidate).not.toHaveBeenCalled();
    act(() => source.emit('alert', { event: 'firing', alert }));
    expect(invalidate).toHaveBeenCalledTimes(1);
    expect(invalidate).toHaveBeenCalledWith({ queryKey: ['alerts'] });
    expect(queryClient.getQueryState(firing)?.isInvalidated).toBe(true);
  });

  it('closes the source on an error and reconnects after a session check after 1, 2, 4 s', async () => {
    vi.useFakeTimers();
    const calls = mockFetch({ 'GET /api/v1/users/me': user('viewer') });
    const { result, queryClient } = renderStream();
    await advance(0);
    expect(FakeEventSource.instances).toHaveLength(1);

    for (const [i, delay] of [1000, 2000, 4000].entries()) {
      const source = FakeEventSource.latest();
      act(() => source.fail());
      expect(source.readyState).toBe(2);
      expect(result.current).toBe('reconnecting');
      await advance(delay - 1);
      expect(FakeEventSource.instances).toHaveLength(i + 1);
      await advance(1);
      expect(FakeEventSource.instances).toHaveLength(i + 2);
      expect(calls.filter((c) => c.path === '/api/v1/users/me')).toHaveLength(i + 2);
    }

    // Once connected again the back-off starts over, and the lists are read again (events
    // may have been missed meanwhile).
    const invalidate = vi.spyOn(queryClient, 'invalidateQueries');
    act(() => FakeEventSource.latest().open());
    expect(result.current).toBe('live');
    expect(invalidate).toHaveBeenCalledWith({ queryKey: ['alerts'] });
    act(() => FakeEventSource.latest().fail());
    await advance(1000);
    expect(FakeEventSource.instances).toHaveLength(5);
  });

  it('stops with forbidden when the session check is refused with 403', async () => {
    const calls = mockFetch({ 'GET /api/v1/users/me': () => ({ status: 403, body: { title: 'Forbidden', status: 403, detail: 'no' } }) });
    const { result } = renderStream();
    await waitFor(() => expect(result.current).toBe('forbidden'));
    expect(FakeEventSource.instances).toHaveLength(0);
    expect(calls.filter((c) => c.path === '/api/v1/users/me')).toHaveLength(1);
  });

  it('closes the stream when unmounted', async () => {
    mockFetch({ 'GET /api/v1/users/me': user('viewer') });
    const { unmount } = renderStream();
    await waitFor(() => expect(FakeEventSource.instances).toHaveLength(1));
    unmount();
    expect(FakeEventSource.latest().readyState).toBe(2);
  });
});
