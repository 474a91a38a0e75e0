/** Helpers for the source-import tests: a fixture with spare repositories, starting an import, status waits, history text. */
import type { WorkflowHandle } from '@temporalio/client';
import { defaultGithubFixture, type GithubFixture } from '../../packages/emulator/src/github/fixture';
import { importStatusQuery, sourceImport } from '../../src/processes/source-import/workflow';
import { type SourceImportInput, type SourceImportStatus } from '../../src/processes/source-import/model';
import { waitFor } from './wait';
import type { TestStack } from './stack';
import { FAST_POLL } from './presets';

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
  // The first workflow task may not have run yet: a failed query counts as not yet.
  const query = () => handle.query(importStatusQuery).catch(() => undefined);
  return (await waitFor(`${what} (status query)`, query, (s) => s !== undefined && predicate(s), timeoutMs, 50))!;
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

/** Base of the emulator's Subversion URLs: the last segment picks the scenario. */
export const SVN = 'https://svn.example.test/repos';

/** Starts an import into `octo-org` (unless the input names another owner) polling every second, on the stack's task queue or `taskQueue`. */
export function startImport(stack: Pick<TestStack, 'client' | 'taskQueue'>, input: Omit<SourceImportInput, 'owner' | 'poll'> & { owner?: string }, taskQueue = stack.taskQueue) {
  return stack.client.workflow.start(sourceImport, {
    taskQueue,
    workflowId: `import-${input.repo}-${Date.now()}`,
    args: [{ owner: 'octo-org', poll: FAST_POLL, ...input }],
  });
}
