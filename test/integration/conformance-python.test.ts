/**
 * Issue 30: the emulator in a second client ecosystem. Python's most used clients — PyGithub and Google's
 * google-api-python-client, pinned with hashes in `test/python/requirements.lock` and installed into a cached
 * virtualenv (`test/python/python-env.ts`) — drive migrations, source imports, hooks and deliveries, events with
 * pagination, the rate-limit status, API keys, log buckets and entries and DNS changes against a real emulator,
 * through their public methods only; pytest (`test/python/`) fails on any answer a client cannot parse. This
 * test starts the emulator, runs pytest against it and fails on any failure, printing pytest's summary.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Emulator } from '@longhaul/emulator';
import { startTestEmulator, TEST_TOKEN } from '../helpers/emulator';
import { ensurePythonEnv } from '../python/python-env';
import { testGithubApiVersion } from '../helpers/api-version';

let emulator: Emulator | undefined;
afterAll(async () => emulator?.close());

function pytest(python: string, env: Record<string, string>): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      python,
      ['-m', 'pytest', '-p', 'no:cacheprovider', '-q', '-rA', '--no-header', join(__dirname, '..', 'python')],
      { cwd: join(__dirname, '..', 'python'), env: { ...process.env, ...env, PYTHONDONTWRITEBYTECODE: '1' }, maxBuffer: 16 * 1024 * 1024, timeout: 5 * 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
}

describe('Python clients (PyGithub, google-api-python-client) against the emulator', () => {
  it('every operation of the suite passes and every answer parses', { timeout: 10 * 60_000 }, async () => {
    const python = await ensurePythonEnv();
    emulator = await startTestEmulator({
      migrations: { exportMs: 300 },
      imports: { timeScale: 0.01 },
      // More than one page of 30 on every feed, so the clients paginate.
      feeds: { initialEvents: 70, eventsPerMinute: 0, eventBytes: 600 },
      google: { apikeys: { deleteOperationMs: 200 }, buckets: { scheduledMs: 100, waitingForPermissionsMs: 100, runningMs: 100 }, dns: { changeMs: 200 } },
    });
    const { code, output } = await pytest(python, {
      LONGHAUL_TOKEN: TEST_TOKEN,
      LONGHAUL_GITHUB_URL: emulator.apiUrl,
      LONGHAUL_GITHUB_API_VERSION: testGithubApiVersion(),
      LONGHAUL_GOOGLE_APIKEYS_URL: emulator.serviceUrl('google-apikeys'),
      LONGHAUL_GOOGLE_LOGGING_URL: emulator.serviceUrl('google-logging'),
      LONGHAUL_GOOGLE_DNS_URL: emulator.serviceUrl('google-dns'),
    });
    console.log(`pytest (test/python) against the emulator:\n${output.split('\n').filter((l) => /^(PASSED|FAILED|ERROR)|passed|failed/.test(l)).join('\n')}`);
    expect(code, output).toBe(0);
    expect(output).toMatch(/\b11 passed\b/);
    // PyGithub followed the renamed repository's 301 to the address it named.
    const log = emulator.requestLog.map((r) => `${r.method} ${r.path}`);
    const moved = log.indexOf('GET /repos/octo-org/alpha-legacy');
    expect(moved).toBeGreaterThanOrEqual(0);
    expect(log[moved + 1]).toBe('GET /repositories/2001');
  });
});
