/**
 * The environment the UI starts with, validated once at start-up: a bad value stops the app
 * with a clear message instead of failing later in a request.
 */
export interface Env {
  /** Prefix of every API request: '' (same origin, the default) or an absolute http(s) URL. */
  apiBaseUrl: string;
  /** How often the connection banner checks that the API answers, ms. */
  healthPollMs: number;
}

export class EnvError extends Error {}

export function parseEnv(raw: Record<string, string | undefined>): Env {
  const base = (raw.VITE_API_BASE_URL ?? '').trim().replace(/\/+$/, '');
  if (base !== '' && !/^https?:\/\/[^\s/]+/.test(base)) {
    throw new EnvError(`VITE_API_BASE_URL must be empty or an http(s) URL, not "${base}"`);
  }
  const pollText = (raw.VITE_HEALTH_POLL_MS ?? '10000').trim();
  const healthPollMs = Number(pollText);
  if (!Number.isInteger(healthPollMs) || healthPollMs < 1000 || healthPollMs > 600_000) {
    throw new EnvError(
      `VITE_HEALTH_POLL_MS must be an integer from 1000 to 600000, not "${pollText}"`,
    );
  }
  return { apiBaseUrl: base, healthPollMs };
}

export const env: Env = parseEnv(import.meta.env as Record<string, string | undefined>);
