/**
 * The end-to-end tests (`e2e/*.spec.ts`) on @playwright/test, against a real portal: API,
 * PostgreSQL, a Celery worker, the telemetry poller and the emulated switch with traffic.
 * `tests/e2e/test_ui.py` starts and seeds that stack and runs `playwright test` with the E2E_*
 * environment (e2e/support.ts says what each is); by hand, start a portal and export them.
 *
 * The browser is Debian's Chromium (`CHROMIUM_PATH`, default /usr/bin/chromium): Playwright
 * never downloads one (scripts/setup-frontend sets PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1).
 * A failed test keeps its trace (`npx playwright show-trace <outputDir>/…/trace.zip`).
 */
import { defineConfig } from '@playwright/test';

const results = '../test-results';

export default defineConfig({
  testDir: './e2e',
  // git-ignored (test-results/ at the repository root).
  outputDir: `${results}/playwright`,
  // One portal, one database: the tests run in file order, one at a time, and no retry (a
  // second attempt would meet the first one's slice).
  fullyParallel: false,
  workers: 1,
  retries: 0,
  forbidOnly: !!process.env.CI,
  // The first live sample waits for a deploy (Celery), a poll and the stream; an alert fires
  // and resolves on the poller's rhythm.
  timeout: 180_000,
  expect: { timeout: 15_000 },
  reporter: [
    ['list'],
    ['html', { outputFolder: `${results}/playwright-report`, open: 'never' }],
  ],
  use: {
    baseURL: process.env.E2E_BASE_URL ?? 'http://127.0.0.1:8000',
    browserName: 'chromium',
    viewport: { width: 1280, height: 800 },
    actionTimeout: 15_000,
    navigationTimeout: 30_000,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    },
  },
});
