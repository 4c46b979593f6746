/**
 * The capacity reports: a link's report opened from its page (a capacity appears), the network
 * report from the navigation, its print layout (screenshot and PDF of the page as printed), and
 * a CSV and a PDF download.
 */
import { join } from 'node:path';

import { expect, portal, shot, test } from './support';

const capacity = /^\d[\d,.]* [kMGT]?bit\/s$/;

test('the capacity report of a link shows its findings, bounds and minimum capacities', async ({ page, signInAs }) => {
  await signInAs('operator');
  await page.goto(`/links/${portal.linkId}`);
  await page.getByRole('link', { name: 'Capacity report' }).click();
  await expect.poll(() => new URL(page.url()).search, { message: 'the report URL' }).toBe(`?link=${portal.linkId}`);
  await expect(page.getByRole('heading', { name: /^Capacity report: /, level: 1 }).first()).toBeVisible({ timeout: 30_000 });
  await expect(page.getByRole('heading', { name: 'Findings and recommendations' }).first()).toBeVisible();
  const table = page.getByRole('table', { name: /^Minimum capacity of / });
  await expect(table.first()).toBeVisible();
  const current = table.getByRole('row', { name: /^As they are/ }).getByRole('cell').first();
  await expect(current, 'a capacity in the Table III row').toHaveText(capacity);
  await expect(page.locator('.report .chart canvas').first()).toBeVisible();
  await shot(page, '15-report-link');
});

test('the network report prints without navigation and downloads CSV and PDF', async ({ page, signInAs }) => {
  await signInAs('operator');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Reports' }).click();
  await expect(page.getByRole('heading', { name: 'Capacity report: network', level: 1 }).first()).toBeVisible({ timeout: 30_000 });
  await expect(page.getByRole('table', { name: 'End-to-end bounds' }).first()).toBeVisible();
  const counts = page.getByTestId('report-summary').locator('.stat-value').first();
  await expect(counts, 'the summary counts links and slices').toHaveText(/^\s*[1-9]\d* · [1-9]\d*\s*$/);
  await shot(page, '16-report-network');

  await page.emulateMedia({ media: 'print' });
  try {
    await expect(page.getByRole('navigation', { name: 'Main' }), 'the navigation prints').toBeHidden();
    await expect(page.getByRole('button', { name: 'Print' }), 'the controls print').toBeHidden();
    await shot(page, '17-report-print');
    await page.pdf({ path: join(portal.shots, '17-report-print.pdf'), format: 'A4', printBackground: true });
  } finally {
    await page.emulateMedia({ media: 'screen' });
  }

  const downloads: [string, RegExp][] = [
    ['Download CSV: findings', /^sliceportal-report-network-\d{8}T\d{4}Z-findings\.csv$/],
    ['Download PDF', /^sliceportal-report-network-\d{8}T\d{4}Z\.pdf$/],
  ];
  for (const [button, name] of downloads) {
    const [download] = await Promise.all([
      page.waitForEvent('download', { timeout: 60_000 }),
      page.getByRole('button', { name: button }).click(),
    ]);
    expect(download.suggestedFilename(), `${button}: saved as`).toMatch(name);
    expect(await download.failure(), `${button}: failed`).toBeNull();
  }
});
