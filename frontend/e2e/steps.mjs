// A tiny step runner for the e2e script: each step runs even when an earlier one failed (so
// one run shows everything that is broken), and the last line is "N passed, M failed".

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
