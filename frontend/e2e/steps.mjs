// A tiny step runner for the e2e script: each step runs even when an earlier one failed (so
// one run shows everything that is broken), and the last line is "N passed, M failed".
import { join } from 'node:path';

/** Run [name, fn] steps in order; print each result; resolve to true when all passed. */
export async function runSteps(steps) {
  let passed = 0;
  let failed = 0;
  for (const [name, fn] of steps) {
    const started = Date.now();
    try {
      await fn();
      passed += 1;
      console.log(`ok   ${name} (${Date.now() - started} ms)`);
    } catch (error) {
      failed += 1;
      console.log(`FAIL ${name} (${Date.now() - started} ms)\n     ${String(error?.stack ?? error).split('\n').slice(0, 6).join('\n     ')}`);
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0;
}

/** Wait until `locator` is visible (a Playwright locator), or throw naming it. */
export async function expectVisible(locator, timeout = 15_000) {
  await locator.first().waitFor({ state: 'visible', timeout });
}

/** Poll `check` until it resolves truthy, or throw after `timeout` ms. */
export async function pollFor(check, what, timeout = 15_000) {
  const deadline = Date.now() + timeout;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/**
 * The capacity report steps (run.mjs adds them after the link view): open the report from the
 * link's page and check a capacity appears, the network report from the navigation, the print
 * layout (screenshot and PDF of the page as printed), and a CSV and a PDF download.
 * `context`: { page, base, linkId, shot, shots } (shots: the screenshot directory).
 */
export function reportSteps({ page, base, linkId, shot, shots }) {
  const capacity = /^\d[\d,.]* [kMGT]?bit\/s$/;
  return [
    ['the capacity report of a link shows its findings, bounds and minimum capacities', async () => {
      await page.goto(`${base}/links/${linkId}`);
      await page.getByRole('link', { name: 'Capacity report' }).click();
      await pollFor(async () => new URL(page.url()).search === `?link=${linkId}`, 'the report URL');
      await expectVisible(page.getByRole('heading', { name: /^Capacity report: /, level: 1 }), 30_000);
      await expectVisible(page.getByRole('heading', { name: 'Findings and recommendations' }));
      const table = page.getByRole('table', { name: /^Minimum capacity of / });
      await expectVisible(table);
      const current = (await table.getByRole('row', { name: /^As they are/ }).getByRole('cell').first().textContent()) ?? '';
      if (!capacity.test(current.trim())) throw new Error(`no capacity in the Table III row: "${current}"`);
      await expectVisible(page.locator('.report .chart canvas').first());
      await shot('15-report-link');
    }],
    ['the network report prints without navigation and downloads CSV and PDF', async () => {
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Reports' }).click();
      await expectVisible(page.getByRole('heading', { name: 'Capacity report: network', level: 1 }), 30_000);
      await expectVisible(page.getByRole('table', { name: 'End-to-end bounds' }));
      const links = (await page.getByTestId('report-summary').locator('.stat-value').first().textContent()) ?? '';
      if (!/^[1-9]\d* · [1-9]\d*$/.test(links.trim())) throw new Error(`the summary counts no links and slices: "${links}"`);
      await shot('16-report-network');
      await page.emulateMedia({ media: 'print' });
      try {
        if (await page.getByRole('navigation', { name: 'Main' }).isVisible()) throw new Error('the navigation prints');
        if (await page.getByRole('button', { name: 'Print' }).isVisible()) throw new Error('the controls print');
        await shot('17-report-print');
        await page.pdf({ path: join(shots, '17-report-print.pdf'), format: 'A4', printBackground: true });
      } finally {
        await page.emulateMedia({ media: 'screen' });
      }
      for (const [button, name] of [['Download CSV: findings', /^sliceportal-report-network-\d{8}T\d{4}Z-findings\.csv$/], ['Download PDF', /^sliceportal-report-network-\d{8}T\d{4}Z\.pdf$/]]) {
        const [download] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }), page.getByRole('button', { name: button }).click()]);
        if (!name.test(download.suggestedFilename())) throw new Error(`${button}: saved as ${download.suggestedFilename()}`);
        if (await download.failure()) throw new Error(`${button}: ${await download.failure()}`);
      }
    }],
  ];
}
