import { problemFrom } from './problem';
import { busyRetryDelay, shouldRetry, shouldRetryMutation } from './react-query';

function problem(status: number, kind: string) {
  return problemFrom(status, 'x', {
    type: `https://sliceportal.dev/problems/${kind}`,
    title: 'x',
    status,
    detail: 'x',
  });
}

describe('retries', () => {
  it('sends a change again only when the server turned it away untouched', () => {
    const busy = problem(503, 'server-busy');
    expect(busy.isServerBusy).toBe(true);
    expect(shouldRetryMutation(0, busy)).toBe(true);
    expect(shouldRetryMutation(1, busy)).toBe(true);
    expect(shouldRetryMutation(2, busy)).toBe(false);
    // The database being down says nothing of whether the change was made: never resent.
    expect(shouldRetryMutation(0, problem(503, 'database-unavailable'))).toBe(false);
    expect(shouldRetryMutation(0, problem(409, 'admission-rejected'))).toBe(false);
    expect(shouldRetryMutation(0, new Error('network'))).toBe(false);
  });

  it('waits at least the second the server asks for', () => {
    expect(busyRetryDelay(0)).toBe(1000);
    expect(busyRetryDelay(1)).toBe(2000);
  });

  it('retries reads on 5xx but not on 4xx', () => {
    expect(shouldRetry(0, problem(503, 'server-busy'))).toBe(true);
    expect(shouldRetry(0, problem(404, 'not-found'))).toBe(false);
  });
});
