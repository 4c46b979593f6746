/**
 * What every end-to-end test shares: the portal it runs against (from the environment), signing
 * in through the page or quickly through the API, an API client, named screenshots, and checks
 * that no test leaves an uncaught error or a Content-Security-Policy violation in the page.
 *
 * Environment (tests/e2e/test_ui.py sets it all):
 *   E2E_BASE_URL                        the portal (playwright.config.ts `baseURL`);
 *   E2E_ADMIN / E2E_OPERATOR / E2E_VIEWER  user:password of each role;
 *   E2E_LINK_ID                         a link whose stored slices leave no room for the new
 *                                       slice at priority 7;
 *   E2E_SWITCH_ID                       the switch (an emulator) holding that link;
 *   E2E_TELEMETRY=1                     the portal runs the emulator with traffic, the worker and
 *                                       the poller (live numbers, alerts);
 *   E2E_ALERT_SLICE_ID                  a slice whose SLA minimum throughput is above what it
 *                                       delivers (its alert fires; the test lowers it to resolve);
 *   E2E_SCREENSHOTS                     where the named screenshots go
 *                                       (default ../test-results/screenshots);
 *   CHROMIUM_PATH                       the browser (default /usr/bin/chromium).
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { test as base, expect, request as playwrightRequest, type APIRequestContext, type Page } from '@playwright/test';

export { expect };

export type Role = 'admin' | 'operator' | 'viewer';

export interface Credentials {
  username: string;
  password: string;
}

const environment = process.env;

function credentials(role: Role): Credentials {
  const name = `E2E_${role.toUpperCase()}`;
  const value = environment[name];
  if (!value || !value.includes(':')) throw new Error(`${name} must be user:password`);
  const at = value.indexOf(':');
  return { username: value.slice(0, at), password: value.slice(at + 1) };
}

export const portal = {
  baseUrl: (environment.E2E_BASE_URL ?? 'http://127.0.0.1:8000').replace(/\/$/, ''),
  credentials,
  linkId: Number(environment.E2E_LINK_ID),
  switchId: Number(environment.E2E_SWITCH_ID ?? 0),
  telemetry: environment.E2E_TELEMETRY === '1',
  alertSliceId: Number(environment.E2E_ALERT_SLICE_ID ?? 0),
  shots: resolve(environment.E2E_SCREENSHOTS ?? join(import.meta.dirname, '..', '..', 'test-results', 'screenshots')),
};
mkdirSync(portal.shots, { recursive: true });

/** A bearer token for `role`, from the API's password flow. */
async function accessToken(role: Role): Promise<string> {
  const { username, password } = credentials(role);
  const context = await playwrightRequest.newContext({ baseURL: portal.baseUrl });
  try {
    const response = await context.post('/api/v1/login/access-token', {
      form: { username, password, grant_type: 'password' },
    });
    expect(response.status(), `sign-in of ${username}`).toBe(200);
    const body = (await response.json()) as { access_token: string };
    return body.access_token;
  } finally {
    await context.dispose();
  }
}

/** Sign in through the sign-in page and land on the overview. */
export async function signIn(page: Page, role: Role): Promise<void> {
  const { username, password } = credentials(role);
  await page.goto('/login');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Overview', level: 1 }).first()).toBeVisible();
}

export async function signOut(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('button', { name: 'Sign in' }).first()).toBeVisible();
}

/** Named screenshot in E2E_SCREENSHOTS (the pages the docs and reviews look at). */
export async function shot(page: Page, name: string, fullPage = true): Promise<void> {
  await page.waitForTimeout(250);
  await page.screenshot({ path: join(portal.shots, `${name}.png`), fullPage });
}

/** Record what the portal under test cannot show yet (the report lists it; the test passes). */
export function pending(description: string): void {
  base.info().annotations.push({ type: 'pending', description });
  console.log(`pending on the backend: ${description}`);
}

interface Fixtures {
  /** Sign in as `role` without the sign-in page (the API's login, in the page's cookie jar). */
  signInAs: (role: Role) => Promise<void>;
  /** The API as the operator. */
  api: APIRequestContext;
  /** Fails the test when the page threw an uncaught error during it. */
  noPageErrors: void;
  /** Fails the test when the browser refused anything under the portal's CSP. */
  noCspViolations: void;
}

export const test = base.extend<Fixtures>({
  signInAs: async ({ page }, use) => {
    await use(async (role) => {
      const { username, password } = credentials(role);
      // page.request shares the browser context's cookies: the login's session cookie lands there.
      const response = await page.request.post('/api/v1/login/access-token', {
        form: { username, password, grant_type: 'password' },
      });
      expect(response.status(), `sign-in of ${username}`).toBe(200);
      await page.goto('/');
      await expect(page.getByRole('heading', { name: 'Overview', level: 1 }).first()).toBeVisible();
    });
  },
  api: async ({ playwright }, use) => {
    const token = await accessToken('operator');
    const context = await playwright.request.newContext({
      baseURL: portal.baseUrl,
      extraHTTPHeaders: { Authorization: `Bearer ${token}` },
    });
    await use(context);
    await context.dispose();
  },
  noPageErrors: [
    async ({ page }, use) => {
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(String(error)));
      await use();
      expect(errors, 'uncaught errors in the page').toEqual([]);
    },
    { auto: true },
  ],
  noCspViolations: [
    async ({ page }, use) => {
      // Chromium reports each refusal on the console ("… violates the following Content
      // Security Policy directive …"); the page's own event says the same, with the directive.
      const violations: string[] = [];
      await page.addInitScript(() => {
        document.addEventListener('securitypolicyviolation', (event) => {
          console.error(`CSP violation: ${event.effectiveDirective} blocked ${event.blockedURI || 'inline'}`);
        });
      });
      page.on('console', (message) => {
        const text = message.text();
        if (/Content Security Policy|CSP violation/i.test(text)) violations.push(text);
      });
      await use();
      expect(violations, 'Content-Security-Policy violations in the page').toEqual([]);
    },
    { auto: true },
  ],
});

/** The id of the slice the admission test creates (by name), for the tests that follow it. */
export async function sliceId(api: APIRequestContext, name: string): Promise<number> {
  const response = await api.get('/api/v1/slices', { params: { q: name } });
  expect(response.status()).toBe(200);
  const body = (await response.json()) as { data: { id: number; name: string }[] };
  const found = body.data.find((slice) => slice.name === name);
  if (!found) throw new Error(`no slice named ${name}: the admission test creates it`);
  return found.id;
}
