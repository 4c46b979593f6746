/**
 * The portal end to end, in the order an operator meets it: sign-in and roles, the overview,
 * admission of a slice that does not fit (rejected with its reason, fixed by the priority plan,
 * admitted), the slices list, the link view and its what-if, deploying to the switch, live
 * numbers, alerts firing and resolving, users and the change log. The tests run in this order
 * (playwright.config.ts: one worker); the ones after the admission test find its slice by name.
 */
import { expect, pending, portal, shot, signIn, signOut, sliceId, test } from './support';

test('the sign-in page refuses a wrong password', async ({ page }) => {
  await page.goto('/slices');
  await expect(page.getByRole('button', { name: 'Sign in' }).first()).toBeVisible();
  await shot(page, '01-login', false);
  await page.getByLabel('Username').fill(portal.credentials('viewer').username);
  await page.getByLabel('Password').fill('not the password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByText('Wrong username or password').first()).toBeVisible();
});

test('a viewer sees the overview but no change controls', async ({ page }) => {
  await signIn(page, 'viewer');
  const nav = page.getByRole('navigation', { name: 'Main' });
  await expect(nav.getByRole('link', { name: 'Slices' }).first()).toBeVisible();
  await expect(nav.getByRole('link', { name: 'Users' }), 'a viewer sees Users').toHaveCount(0);
  await expect(nav.getByRole('link', { name: 'Change log' }), 'a viewer sees the change log').toHaveCount(0);
  await page.getByRole('link', { name: 'Slices' }).first().click();
  await expect(page.getByRole('table', { name: 'Slices' }).first()).toBeVisible();
  await expect(page.getByRole('link', { name: 'New slice' }), 'a viewer can create slices').toHaveCount(0);
  await page.goto('/users');
  await expect(page.getByText('This page is not for your role').first()).toBeVisible();
  await shot(page, '02-viewer-forbidden', false);
  await signOut(page);
});

test('the session is an HttpOnly cookie: nothing in localStorage, changes need the CSRF token', async ({ page }) => {
  const loginPage = await page.goto('/login');
  const headers = loginPage!.headers();
  expect(headers['content-security-policy'], 'the UI is served with its CSP').toContain("script-src 'self'");
  expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
  expect(headers['x-frame-options']).toBe('DENY');
  await signIn(page, 'viewer');
  const storage = await page.evaluate(() => ({ local: window.localStorage.length, session: window.sessionStorage.length }));
  expect(storage, 'nothing in web storage').toEqual({ local: 0, session: 0 });
  const cookie = (await page.context().cookies()).find((c) => c.name === 'sliceportal_session');
  expect(cookie?.httpOnly).toBe(true);
  expect(cookie?.sameSite).toBe('Strict');
  expect(await page.evaluate(() => document.cookie), 'the session is hidden from scripts').not.toContain('sliceportal_session');
  await page.reload();
  await expect(page.getByRole('heading', { name: 'Overview', level: 1 }).first()).toBeVisible();
  const statuses = await page.evaluate(async () => {
    const csrf = document.cookie.split('; ').find((c) => c.startsWith('sliceportal_csrf='))?.split('=')[1] ?? '';
    const post = (headers: Record<string, string>) => fetch('/api/v1/stream/ticket', { method: 'POST', headers }).then((r) => r.status);
    return { without: await post({}), with: await post({ 'X-CSRF-Token': csrf }) };
  });
  expect(statuses).toEqual({ without: 403, with: 200 });
  await signOut(page);
  expect((await page.context().cookies()).map((c) => c.name)).not.toContain('sliceportal_session');
  await page.goto('/');
  await expect(page.getByRole('button', { name: 'Sign in' }).first()).toBeVisible();
});

test('an operator sees the overview with switches, links and alerts', async ({ page, signInAs }) => {
  await signInAs('operator');
  await expect(page.getByRole('table', { name: 'Links' }).first()).toBeVisible();
  await expect(page.getByRole('table', { name: 'Switches' }).first()).toBeVisible();
  await expect.poll(() => page.getByRole('meter').count(), { message: 'utilisation meters' }).toBeGreaterThan(0);
  await shot(page, '03-overview');
});

test('a new slice that does not fit is previewed, rejected with its reason, fixed and admitted', async ({ page, signInAs, api }) => {
  await signInAs('operator');
  await page.goto('/slices/new');
  const form = page.getByRole('form', { name: 'Slice' });
  await form.getByLabel(/^Name/).fill('Peering');
  await form.getByLabel('Rate limit').fill('240');
  await form.getByLabel('Burst limit').fill('30');
  await form.getByLabel('IPv4 destination prefixes').fill('10.3.0.0/16');
  const link = (await (await api.get(`/api/v1/links/${portal.linkId}`)).json()) as { name: string };
  await form.getByRole('checkbox', { name: new RegExp(link.name) }).check();
  const effects = page.getByTestId('slice-effects');
  await expect(effects.getByText('does not fit').first()).toBeVisible();
  await expect(effects.getByText('Why it does not fit').first()).toBeVisible();
  await expect(effects.getByTestId('preview-plan'), 'a previewed priority plan').not.toHaveCount(0);
  await shot(page, '04-slice-form-preview', false);

  await form.getByRole('button', { name: 'Create slice' }).click();
  const rejection = page.getByTestId('rejection');
  await expect(rejection.first()).toBeVisible();
  await expect(rejection.getByTestId('violation-reason').first()).toHaveText(/exceeds target|unbounded|exceed capacity/);
  await rejection.scrollIntoViewIfNeeded();
  await shot(page, '05-slice-rejected', false);

  await rejection.getByRole('button', { name: 'Apply priority plan and retry' }).click();
  await expect(page.getByTestId('admitted').first()).toBeVisible();
  await expect(page.getByText('Pending deployment').first()).toBeVisible();
  const id = Number(new URL(page.url()).pathname.split('/').pop());
  const stored = (await (await api.get(`/api/v1/slices/${id}`)).json()) as { name: string };
  expect(stored.name, 'the created slice').toBe('Peering');
  const analysis = (await (await api.get(`/api/v1/links/${portal.linkId}/analysis`)).json()) as { admissible: boolean };
  expect(analysis.admissible, 'the link is admissible after the fix').toBe(true);
  await shot(page, '06-slice-admitted');
});

test('a CoDel slice is created with its parameters and described', async ({ page, signInAs, api }) => {
  await signInAs('operator');
  await page.goto('/slices/new');
  const form = page.getByRole('form', { name: 'Slice' });
  await form.getByLabel(/^Name/).fill('CoDel bulk');
  await form.getByLabel('Rate limit').fill('1');
  await form.getByLabel('Burst limit').fill('20');
  await form.getByLabel(/^Delay target/).fill('1000');
  await form.getByLabel(/^Priority/).selectOption('1');
  await form.getByLabel('IPv4 destination prefixes').fill('10.77.0.0/16');
  await form.getByLabel('Queue scheme').selectOption('codel');
  await expect(form.getByLabel('CoDel interval'), 'the default interval').toHaveValue('100');
  await form.getByLabel('CoDel target').fill('3');
  await form.getByLabel('Mark instead of dropping').check();
  const link = (await (await api.get(`/api/v1/links/${portal.linkId}`)).json()) as { name: string };
  await form.getByRole('checkbox', { name: new RegExp(link.name) }).check();
  await form.getByRole('button', { name: 'Create slice' }).click();
  await expect(page.getByText(/CoDel: target 3 ms, interval 100 ms; marks ECN-capable packets/).first()).toBeVisible();
  const id = Number(new URL(page.url()).pathname.split('/').pop());
  const stored = (await (await api.get(`/api/v1/slices/${id}`)).json()) as { scheme: string; codel: unknown };
  expect(stored.scheme).toBe('codel');
  expect(stored.codel).toEqual({ target_s: 0.003, interval_s: 0.1, ecn_mark: true });
  expect((await api.delete(`/api/v1/slices/${id}`)).status(), 'the slice is deleted again').toBe(204);
});

test('an ABC slice is created with its parameters, resolved by the API and described', async ({ page, signInAs, api }) => {
  await signInAs('operator');
  await page.goto('/slices/new');
  const form = page.getByRole('form', { name: 'Slice' });
  await form.getByLabel(/^Name/).fill('ABC fair');
  await form.getByLabel('Rate limit').fill('1');
  await form.getByLabel('Burst limit').fill('20');
  await form.getByLabel(/^Delay target/).fill('1000');
  await form.getByLabel(/^Priority/).selectOption('1');
  await form.getByLabel('IPv4 destination prefixes').fill('10.78.0.0/16');
  await form.getByLabel('Queue scheme').selectOption('abc');
  await expect(form.getByLabel('Meter memory'), 'the default meter memory').toHaveValue('3');
  // 1 Mbit/s: a 1,500-byte packet takes 12 ms; Q_min's default (72 ms) is capped at the burst limit
  await expect(form.getByLabel('Q_min'), "Q_min's default at the rate").toHaveAttribute('placeholder', '20');
  await form.getByLabel('Q_base').fill('15');
  await form.getByLabel('Aggregates').selectOption('source_prefix');
  await form.getByLabel('Source prefix length').fill('24');
  const link = (await (await api.get(`/api/v1/links/${portal.linkId}`)).json()) as { name: string };
  await form.getByRole('checkbox', { name: new RegExp(link.name) }).check();
  await form.getByRole('button', { name: 'Create slice' }).click();
  await expect(page.getByText(/ABC per source \/24: drops at 15 ms of queue for average activity, 192 ms less/).first()).toBeVisible();
  const id = Number(new URL(page.url()).pathname.split('/').pop());
  const stored = (await (await api.get(`/api/v1/slices/${id}`)).json()) as { scheme: string; abc: Record<string, unknown> };
  expect(stored.scheme).toBe('abc');
  expect(stored.abc).toMatchObject({ meter_memory_s: 3, average_memory_s: 0.3, reference_rate_bps: 1e4, q_base_s: 0.015, key: 'source_prefix', prefix_length: 24 });
  expect(stored.abc.q_min_s, "Q_min's default, at most the Q_base given").toBeCloseTo(0.015);
  expect(stored.abc.gamma_s, "gamma's default: 16 packets' time").toBeCloseTo(0.192);
  expect((await api.delete(`/api/v1/slices/${id}`)).status(), 'the slice is deleted again').toBe(204);
});

test('the slices list sorts and filters', async ({ page, signInAs }) => {
  await signInAs('operator');
  await page.goto('/slices');
  const table = page.getByRole('table', { name: 'Slices' });
  await expect(table.getByRole('link', { name: 'Peering' }).first()).toBeVisible();
  await table.getByRole('button', { name: /Prio/ }).click();
  await expect(table.locator('th[aria-sort="ascending"]').first()).toBeVisible();
  await expect.poll(() => table.getByText('within bound').count(), { message: 'health of every slice' }).toBeGreaterThanOrEqual(3);
  await shot(page, '07-slices');
  await page.getByLabel('Search by name').fill('peer');
  await expect(table.locator('tbody tr'), 'one filtered row').toHaveCount(1);
});

test('the link view stacks levels, charts delay vs capacity, and recomputes a what-if', async ({ page, signInAs }) => {
  await signInAs('operator');
  await page.goto(`/links/${portal.linkId}`);
  await expect(page.getByRole('list', { name: 'Priority levels' }).first()).toBeVisible();
  await expect(page.getByText('Priority 7', { exact: true }).first()).toBeVisible();
  await expect(page.locator('.chart canvas').first()).toBeVisible();
  await expect(page.getByText('admissible', { exact: true }).first()).toBeVisible();
  await shot(page, '08-link-view');
  const exact = page.getByLabel('Capacity (exact)');
  await exact.fill('200');
  await exact.press('Enter');
  await expect(page.getByText('what-if not admissible').first()).toBeVisible();
  await expect(page.getByTestId('min-capacity'), 'the minimum capacity').toContainText('Mbit/s');
  await shot(page, '09-link-what-if');
  await page.getByRole('button', { name: 'Reset', exact: true }).click();
  await expect(page.getByText('admissible', { exact: true }).first()).toBeVisible();
});

test('switch deploy and reconcile show their state', async ({ page, signInAs }) => {
  expect(portal.switchId, 'E2E_SWITCH_ID').toBeGreaterThan(0);
  await signInAs('operator');
  await page.goto(`/switches/${portal.switchId}`);
  await page.getByRole('button', { name: 'Deploy pipeline and entries' }).click();
  const unavailable = page.getByText('Deploying is not available yet');
  const requested = page.getByText('Requested');
  const failed = page.getByText('The switch operation failed');
  await expect(unavailable.or(requested).or(failed).first(), 'an answer to deploy').toBeVisible();
  if (await unavailable.count()) pending('deploy / reconcile: POST /api/v1/switches/{id}/deploy|reconcile answer 404');
  if (await failed.count()) pending(`deploy: ${await page.locator('.notice-bad').first().textContent()}`);
  await expect(page.getByText('Pipeline in sync').first()).toBeVisible();
  await shot(page, '10-switch');
});

test('live numbers arrive for the slice', async ({ page, signInAs, api }) => {
  const id = await sliceId(api, 'Peering');
  await signInAs('operator');
  await page.goto(`/slices/${id}`);
  const status = page.getByTestId('stream-status');
  await expect(status.first()).toBeVisible();
  await expect(status, 'the stream to answer').not.toHaveAttribute('data-status', 'connecting');
  if (!portal.telemetry) {
    // The stream answers (ticket + EventSource), but nothing samples the slice.
    await expect(status, 'the stream to connect').toHaveAttribute('data-status', /^(stale|live)$/);
    pending('live numbers: the test backend runs no emulator / poller (stream connected, no sample)');
    await shot(page, '11-slice-live-waiting');
    return;
  }
  // The first sample needs the deploy (Celery), a poll and the stream: 30 s ran out once in a
  // full CI run on a slow, loaded machine.
  await expect(page.getByTestId('live-numbers').first()).toBeVisible({ timeout: 60_000 });
  await expect(status, 'the stream to be live').toHaveAttribute('data-status', 'live');
  // Peering is offered 20 Mbit/s: wait for a sample that carries traffic.
  const throughput = page.getByTestId('live-numbers').locator('.stat-value').first();
  await expect(throughput, 'a non-zero throughput').toHaveText(/^[1-9][\d.]* [kMG]bit\/s$/, { timeout: 30_000 });
  await page.waitForTimeout(4000);
  await shot(page, '11-slice-live');
});

test('alerts fire and resolve', async ({ page, signInAs, api }) => {
  await signInAs('operator');
  await page.goto('/alerts');
  const table = page.getByRole('table', { name: 'Alerts' });
  const empty = page.getByText('Nothing is firing');
  await expect(table.or(empty).first(), 'the alerts page').toBeVisible();
  if (!portal.telemetry) {
    await shot(page, '12-alerts', false);
    pending('alerts: fire / resolve needs the emulator and the poller in the test backend');
    return;
  }
  // The slice delivers at most its 12 Mbit/s of the 20 offered, under its 15 Mbit/s minimum.
  const row = () =>
    page
      .getByTestId('alert-row')
      .filter({ hasText: 'throughput below minimum' })
      .filter({ has: page.locator(`a[href="/slices/${portal.alertSliceId}"]`) })
      .first();
  await expect(row()).toBeVisible({ timeout: 45_000 });
  await expect(row(), 'the alert is firing').toHaveAttribute('data-state', 'firing');
  await row().getByRole('button', { name: 'Acknowledge' }).click();
  await expect(row().getByText('acknowledged').first()).toBeVisible();
  await shot(page, '12-alerts', false);
  const patch = await api.patch(`/api/v1/slices/${portal.alertSliceId}`, {
    data: { sla: { min_throughput_bps: 1e6 } },
  });
  expect(patch.status(), `PATCH the SLA: ${await patch.text()}`).toBe(200);
  await page.getByRole('tab', { name: 'Resolved' }).click();
  await expect(row()).toBeVisible({ timeout: 45_000 });
  await shot(page, '12-alerts-resolved', false);
});

test('an admin manages users and reads the change log', async ({ page }) => {
  await signIn(page, 'admin');
  const nav = page.getByRole('navigation', { name: 'Main' });
  await nav.getByRole('link', { name: 'Users' }).click();
  await expect(page.getByRole('table', { name: 'Users' }).first()).toBeVisible();
  await shot(page, '13-users');
  await nav.getByRole('link', { name: 'Change log' }).click();
  const log = page.getByRole('table', { name: 'Change log' });
  await expect(log.getByText('Peering').first()).toBeVisible();
  await log.getByRole('button', { name: 'Details' }).first().click();
  await shot(page, '14-change-log');
});
