/** Helpers for the source-import tests: a fixture with spare repositories, status waits, history text. */
import { expect } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import { defaultGithubFixture, type GithubFixture } from '../../src/emulator/github/fixture';
import { importStatusQuery } from '../../src/workflows/source-import';
import type { SourceImportStatus } from '../../src/common/source-import';

/** The default fixture plus empty repositories `octo-org/<prefix>-1..count` to import into. */
export function fixtureWithImportRepos(prefix: string, count: number): GithubFixture {
  const fixture = defaultGithubFixture();
  for (let i = 1; i <= count; i++) {
    fixture.repositories.push({ id: 5000 + i, name: `${prefix}-${i}`, owner: 'octo-org', private: false, workflowsEnabled: false });
  }
  return fixture;
}

/** Queries `status` until `predicate` holds (the workflow is running meanwhile). */
export async function waitForImportStatus(
  handle: WorkflowHandle,
  predicate: (s: SourceImportStatus) => boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<SourceImportStatus> {
  const deadline = Date.now() + timeoutMs;
  let last: SourceImportStatus | undefined;
  while (Date.now() < deadline) {
    try {
      last = await handle.query(importStatusQuery);
      if (predicate(last)) return last;
    } catch {
      // The first workflow task may not have run yet.
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  expect.fail(`timed out waiting for ${what}; last status: ${JSON.stringify(last)}`);
}

/**
 * The whole event history of a run as text: the history JSON plus every payload decoded (payload
 * bytes arrive either as bytes or as base64 strings), so a secret is found wherever it sits.
 */
export async function historyText(handle: WorkflowHandle): Promise<string> {
  const history = await handle.fetchHistory();
  const decoded: string[] = [];
  const json = JSON.stringify(history, (_key, value: unknown) => {
    if (value instanceof Uint8Array) {
      const text = Buffer.from(value).toString('utf8');
      decoded.push(text);
      return text;
    }
    if (typeof value === 'string' && value.length >= 4 && value.length % 4 === 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(value)) {
      decoded.push(Buffer.from(value, 'base64').toString('utf8'));
    }
    return value;
  });
  return `${json}\n${decoded.join('\n')}`;
}
