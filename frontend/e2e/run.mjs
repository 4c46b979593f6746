// End-to-end test of the UI against a real backend, with playwright-core and the system's
// Chromium (never a downloaded browser). tests/e2e/test_ui.py starts the backend, seeds it and
// runs this script; by hand:
//
//   E2E_BASE_URL=http://127.0.0.1:8000 E2E_ADMIN=admin:secret E2E_OPERATOR=op:secret \
//   E2E_VIEWER=view:secret E2E_LINK_ID=1 node e2e/run.mjs
//
// Environment: E2E_BASE_URL; E2E_ADMIN / E2E_OPERATOR / E2E_VIEWER as user:password;
// E2E_LINK_ID (a link whose stored slices leave no room for the new slice at priority 7);
// E2E_SWITCH_ID; E2E_TELEMETRY=1 when the backend runs the emulator with traffic, the worker
// and the poller (live numbers, alerts), with E2E_ALERT_SLICE_ID the slice whose SLA minimum
// throughput is above what it delivers (fires; this script lowers it to resolve); CHROMIUM_PATH (default /usr/bin/chromium); E2E_SCREENSHOTS (directory,
// default ../test-results/screenshots). Exit code 0 only when every step passed; steps that
// need backend features that do not exist yet are reported as "pending" and do not fail.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { chromium } from 'playwright-core';

import { expectVisible, pollFor, reportSteps, runSteps } from './steps.mjs';

const env = process.env;
const base = (env.E2E_BASE_URL ?? 'http://127.0.0.1:8000').replace(/\/$/, '');
const credentials = (name) => {
  const value = env[name];
  if (!value || !value.includes(':')) throw new Error(`${name} must be user:password`);
  const at = value.indexOf(':');
  return { username: value.slice(0, at), password: value.slice(at + 1) };
};
const admin = credentials('E2E_ADMIN');
const operator = credentials('E2E_OPERATOR');
const viewer = credentials('E2E_VIEWER');
const linkId = Number(env.E2E_LINK_ID);
const switchId = Number(env.E2E_SWITCH_ID ?? 0);
const telemetry = env.E2E_TELEMETRY === '1';
const alertSliceId = Number(env.E2E_ALERT_SLICE_ID ?? 0);
const shots = resolve(env.E2E_SCREENSHOTS ?? join(import.meta.dirname, '..', '..', 'test-results', 'screenshots'));
mkdirSync(shots, { recursive: true });

const profile = mkdtempSync(join(tmpdir(), 'sliceportal-e2e-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1280, height: 800 },
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
});
const page = context.pages()[0] ?? (await context.newPage());
page.setDefaultTimeout(15_000);
const consoleErrors = [];
page.on('pageerror', (error) => consoleErrors.push(String(error)));

async function shot(name, fullPage = true) {
  await page.waitForTimeout(250);
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage });
}

async function signIn({ username, password }) {
  await page.goto(`${base}/login`);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expectVisible(page.getByRole('heading', { name: 'Overview', level: 1 }));
}

async function signOut() {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expectVisible(page.getByRole('button', { name: 'Sign in' }));
}

async function api(path, init = {}) {
  return page.evaluate(
    async ({ url, init }) => {
      const session = JSON.parse(window.localStorage.getItem('sliceportal.session') ?? 'null');
      const headers = { ...(init.headers ?? {}), ...(session ? { Authorization: `Bearer ${session.token}` } : {}) };
      const response = await fetch(url, { ...init, headers });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : null };
    },
    { url: `${base}${path}`, init },
  );
}

const state = {};
const pending = [];

const ok = await runSteps([
  ['the sign-in page refuses a wrong password', async () => {
    await page.goto(`${base}/slices`);
    await expectVisible(page.getByRole('button', { name: 'Sign in' }));
    await shot('01-login', false);
    await page.getByLabel('Username').fill(viewer.username);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expectVisible(page.getByText('Wrong username or password'));
  }],
  ['a viewer sees the overview but no change controls', async () => {
    await signIn(viewer);
    const nav = page.getByRole('navigation', { name: 'Main' });
    await expectVisible(nav.getByRole('link', { name: 'Slices' }));
    if (await nav.getByRole('link', { name: 'Users' }).count()) throw new Error('a viewer sees Users');
    if (await nav.getByRole('link', { name: 'Change log' }).count()) throw new Error('a viewer sees the change log');
    await page.getByRole('link', { name: 'Slices' }).first().click();
    await expectVisible(page.getByRole('table', { name: 'Slices' }));
    if (await page.getByRole('link', { name: 'New slice' }).count()) throw new Error('a viewer can create slices');
    await page.goto(`${base}/users`);
    await expectVisible(page.getByText('This page is not for your role'));
    await shot('02-viewer-forbidden', false);
    await signOut();
  }],
  ['an operator sees the overview with switches, links and alerts', async () => {
    await signIn(operator);
    await expectVisible(page.getByRole('table', { name: 'Links' }));
    await expectVisible(page.getByRole('table', { name: 'Switches' }));
    await pollFor(async () => (await page.getByRole('meter').count()) > 0, 'utilisation meters');
    await shot('03-overview');
  }],
  ['a new slice that does not fit is previewed, rejected with its reason, fixed and admitted', async () => {
    await page.goto(`${base}/slices/new`);
    const form = page.getByRole('form', { name: 'Slice' });
    await form.getByLabel(/^Name/).fill('Peering');
    await form.getByLabel('Rate limit').fill('240');
    await form.getByLabel('Burst limit').fill('30');
    await form.getByLabel('IPv4 destination prefixes').fill('10.3.0.0/16');
    const link = (await api(`/api/v1/links/${linkId}`)).body;
    await form.getByRole('checkbox', { name: new RegExp(link.name) }).check();
    const effects = page.getByTestId('slice-effects');
    await expectVisible(effects.getByText('does not fit'));
    await expectVisible(effects.getByText('Why it does not fit'));
    await pollFor(async () => (await effects.getByTestId('preview-plan').count()) > 0, 'a previewed priority plan');
    await shot('04-slice-form-preview', false);
    await form.getByRole('button', { name: 'Create slice' }).click();
    const rejection = page.getByTestId('rejection');
    await expectVisible(rejection);
    const reason = await rejection.getByTestId('violation-reason').first().textContent();
    if (!/exceeds target|unbounded|exceed capacity/.test(reason ?? '')) throw new Error(`unexpected reason: ${reason}`);
    state.reason = reason;
    await rejection.scrollIntoViewIfNeeded();
    await shot('05-slice-rejected', false);
    await rejection.getByRole('button', { name: 'Apply priority plan and retry' }).click();
    await expectVisible(page.getByTestId('admitted'));
    await expectVisible(page.getByText('Pending deployment').first());
    const id = Number(new URL(page.url()).pathname.split('/').pop());
    const stored = (await api(`/api/v1/slices/${id}`)).body;
    if (stored.name !== 'Peering') throw new Error(`the created slice is ${stored.name}`);
    state.sliceId = id;
    state.priority = stored.priority;
    const analysis = (await api(`/api/v1/links/${linkId}/analysis`)).body;
    if (!analysis.admissible) throw new Error('the link is not admissible after the fix');
    await shot('06-slice-admitted');
  }],
  ['the slices list sorts and filters', async () => {
    await page.goto(`${base}/slices`);
    const table = page.getByRole('table', { name: 'Slices' });
    await expectVisible(table.getByRole('link', { name: 'Peering' }));
    await table.getByRole('button', { name: /Prio/ }).click();
    await expectVisible(table.locator('th[aria-sort="ascending"]'));
    await pollFor(async () => (await table.getByText('within bound').count()) >= 3, 'health of every slice');
    await shot('07-slices');
    await page.getByLabel('Search by name').fill('peer');
    await pollFor(async () => (await table.locator('tbody tr').count()) === 1, 'one filtered row');
  }],
  ['the link view stacks levels, charts delay vs capacity, and recomputes a what-if', async () => {
    await page.goto(`${base}/links/${linkId}`);
    await expectVisible(page.getByRole('list', { name: 'Priority levels' }));
    await expectVisible(page.getByText('Priority 7', { exact: true }));
    await expectVisible(page.locator('.chart canvas').first());
    await expectVisible(page.getByText('admissible', { exact: true }));
    await shot('08-link-view');
    const exact = page.getByLabel('Capacity (exact)');
    await exact.fill('200');
    await exact.press('Enter');
    await expectVisible(page.getByText('what-if not admissible'));
    await pollFor(async () => ((await page.getByTestId('min-capacity').textContent()) ?? '').includes('Mbit/s'), 'the minimum capacity');
    await shot('09-link-what-if');
    await page.getByRole('button', { name: 'Reset', exact: true }).click();
    await expectVisible(page.getByText('admissible', { exact: true }));
  }],
  ...reportSteps({ page, base, linkId, shot, shots }),
  ['switch deploy and reconcile show their state', async () => {
    if (!switchId) throw new Error('E2E_SWITCH_ID is not set');
    await page.goto(`${base}/switches/${switchId}`);
    await page.getByRole('button', { name: 'Deploy pipeline and entries' }).click();
    const unavailable = page.getByText('Deploying is not available yet');
    const requested = page.getByText('Requested');
    const failed = page.getByText('The switch operation failed');
    await pollFor(async () => (await unavailable.count()) + (await requested.count()) + (await failed.count()) > 0, 'an answer to deploy');
    if (await unavailable.count()) pending.push('deploy / reconcile: POST /api/v1/switches/{id}/deploy|reconcile answer 404');
    if (await failed.count()) pending.push(`deploy: ${await page.locator('.notice-bad').first().textContent()}`);
    await expectVisible(page.getByText('Pipeline in sync'));
    await shot('10-switch');
  }],
  ['live numbers arrive for the slice', async () => {
    await page.goto(`${base}/slices/${state.sliceId}`);
    const status = page.getByTestId('stream-status');
    await expectVisible(status);
    await pollFor(async () => (await status.getAttribute('data-status')) !== 'connecting', 'the stream to answer');
    if (!telemetry) {
      // The stream answers (ticket + EventSource), but nothing samples the slice.
      await pollFor(async () => ['stale', 'live'].includes(await status.getAttribute('data-status')), 'the stream to connect');
      pending.push('live numbers: the test backend runs no emulator / poller (stream connected, no sample)');
      await shot('11-slice-live-waiting');
      return;
    }
    // The first sample needs the deploy (Celery), a poll and the stream: 30 s ran out once
    // in a full CI run on a slow, loaded machine.
    await expectVisible(page.getByTestId('live-numbers'), 60_000);
    await pollFor(async () => (await status.getAttribute('data-status')) === 'live', 'the stream to be live');
    // Peering is offered 20 Mbit/s: wait for a sample that carries traffic.
    const throughput = page.getByTestId('live-numbers').locator('.stat-value').first();
    let seen = '';
    await pollFor(async () => /^[1-9][\d.]* [kMG]bit\/s$/.test((seen = (await throughput.textContent()) ?? '')), 'a non-zero throughput', 30_000)
      .catch((error) => { throw new Error(`${error.message} (last: ${seen})`); });
    await page.waitForTimeout(4000);
    await shot('11-slice-live');
  }],
  ['alerts fire and resolve', async () => {
    await page.goto(`${base}/alerts`);
    const table = page.getByRole('table', { name: 'Alerts' });
    const empty = page.getByText('Nothing is firing');
    await pollFor(async () => (await table.count()) + (await empty.count()) > 0, 'the alerts page');
    if (!telemetry) {
      await shot('12-alerts', false);
      pending.push('alerts: fire / resolve needs the emulator and the poller in the test backend');
      return;
    }
    // The slice delivers at most its 12 Mbit/s of the 20 offered, under its 15 Mbit/s minimum.
    const row = () => page.getByTestId('alert-row').filter({ hasText: 'throughput below minimum' }).filter({ has: page.locator(`a[href="/slices/${alertSliceId}"]`) });
    await expectVisible(row(), 45_000);
    if ((await row().first().getAttribute('data-state')) !== 'firing') throw new Error('the alert is not firing');
    await row().first().getByRole('button', { name: 'Acknowledge' }).click();
    await expectVisible(row().first().getByText('acknowledged'));
    await shot('12-alerts', false);
    const patch = await api(`/api/v1/slices/${alertSliceId}`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ sla: { min_throughput_bps: 1e6 } }),
    });
    if (patch.status !== 200) throw new Error(`PATCH the SLA: ${patch.status} ${JSON.stringify(patch.body)}`);
    await page.getByRole('tab', { name: 'Resolved' }).click();
    await expectVisible(row(), 45_000);
    await shot('12-alerts-resolved', false);
  }],
  ['an admin manages users and reads the change log', async () => {
    await signOut();
    await signIn(admin);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Users' }).click();
    await expectVisible(page.getByRole('table', { name: 'Users' }));
    await shot('13-users');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Change log' }).click();
    const log = page.getByRole('table', { name: 'Change log' });
    await expectVisible(log.getByText('Peering').first());
    await log.getByRole('button', { name: 'Details' }).first().click();
    await shot('14-change-log');
  }],
  ['no uncaught error in the page', async () => {
    if (consoleErrors.length) throw new Error(consoleErrors.join('\n'));
  }],
]);

await context.close();
rmSync(profile, { recursive: true, force: true });
for (const item of pending) console.log(`pending on the backend: ${item}`);
console.log(`screenshots in ${shots}`);
process.exit(ok ? 0 : 1);
