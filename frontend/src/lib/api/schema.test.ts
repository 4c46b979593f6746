// @vitest-environment node
/**
 * The generated client is exactly what the generator makes of openapi.json: nobody edited it
 * by hand. (`scripts/gen-api-client --check` also compares openapi.json with the backend.)
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

it('src/lib/api/schema.ts is the generator output of openapi.json', () => {
  const frontend = resolve(import.meta.dirname, '../../..');
  const script = readFileSync(join(frontend, '..', 'scripts', 'gen-api-client'), 'utf8');
  const flags = /\.openapi\.tmp\.json (--.*?) \\\n/.exec(script)?.[1]?.split(' ') ?? [];
  expect(flags).toContain('--root-types');
  const dir = mkdtempSync(join(tmpdir(), 'gen-api-'));
  try {
    const out = join(dir, 'schema.ts');
    execFileSync(join(frontend, 'node_modules', '.bin', 'openapi-typescript'), ['openapi.json', ...flags, '--output', out], { cwd: frontend, stdio: 'pipe' });
    const committed = readFileSync(join(frontend, 'src', 'lib', 'api', 'schema.ts'), 'utf8');
    const body = committed.split('\n').slice(2).join('\n');
    expect(body).toBe(readFileSync(out, 'utf8'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
