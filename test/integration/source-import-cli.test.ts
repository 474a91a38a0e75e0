/** The starter's import commands as a user runs them: a real process, the shared dev server, a real worker, the emulator. */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { sourceImport } from '../../src/processes/source-import/workflow';
import { useStack } from '../helpers/stack';
import { runStarter } from '../helpers/starter';
import { fixtureWithImportRepos, SVN, waitForImportStatus } from '../helpers/source-import';

const fast = ['--poll-initial', '1', '--poll-max', '1'];

describe('starter import commands', () => {
  // 3 s importing, 2 s mapping, 3 s pushing: long enough for --follow (twice a second) to see each.
  const stack = useStack({ emulator: { fixture: fixtureWithImportRepos('cli', 5), imports: { timeScale: 0.05, importingMs: 60_000, mappingMs: 40_000, pushingMs: 60_000 } } });
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'longhaul-import-cli-'));
  });

  it('import --authors FILE.csv --lfs opt_out --wait --json prints one JSON object with the result, workflowId and workflowStatus', async () => {
    const csv = join(dir, 'authors.csv');
    await writeFile(csv, 'remote,name,email\n# the release manager\nalice,"Liddell, Alice",alice@example.com\nbob,Bob Builder,bob@example.com\n');
    const { code, stdout } = await runStarter(
      ['import', '--owner', 'octo-org', '--repo', 'cli-1', '--vcs-url', `${SVN}/large-files`, '--authors', csv, '--lfs', 'opt_out', ...fast, '--wait', '--json'],
      stack.taskQueue,
    );
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    expect(out).toMatchObject({ workflowStatus: 'COMPLETED', status: 'complete', owner: 'octo-org', repo: 'cli-1', vcs: 'subversion', lfs: { useLfs: 'opt_out' } });
    expect(out.workflowId).toMatch(/^import-octo-org-cli-1-/);
    expect(out.authorsMapped.map((a: { name: string }) => a.name)).toEqual(['Liddell, Alice', 'Bob Builder']);
    expect(stack.emulator.imports.pushes('octo-org', 'cli-1')[0].removedFiles).toHaveLength(2);
  });

  it('answers a waiting import: refuses a pasted secret locally, prints the workflow refusal, then the accepted mapping and credentials', async () => {
    Object.assign(process.env, { LONGHAUL_IMPORT_CREDENTIALS: 'cli-svn', LONGHAUL_IMPORT_CLI_SVN_USERNAME: 'cli-user', LONGHAUL_IMPORT_CLI_SVN_PASSWORD: 'cli-secret-31c9' });
    const started = await runStarter(
      ['import', '--owner', 'octo-org', '--repo', 'cli-2', '--vcs-url', `${SVN}/needs-auth`, '--vcs', 'subversion', ...fast, '--json'],
      stack.taskQueue,
    );
    expect(started.code).toBe(0);
    const { workflowId, workflowStatus } = JSON.parse(started.stdout);
    expect(workflowStatus).toBe('RUNNING');
    const handle = stack.client.workflow.getHandle<typeof sourceImport>(workflowId);
    await waitForImportStatus(handle, (s) => s.phase === 'waiting-for-credentials', 'the wait for credentials');

    const reference = await runStarter(['import-credentials', '--workflow-id', workflowId, '--credentials', 'file:/proc/self/environ'], stack.taskQueue);
    expect(reference.code).toBe(2);
    expect(reference.stderr.trim()).toBe(
      "error: credentials must be the name of a source-import credential configured on the workers (LONGHAUL_IMPORT_CREDENTIALS): env: and file: references are refused, nothing is read from the worker's environment or files (nothing was sent)",
    );

    const refused = await runStarter(['import-choose', '--owner', 'octo-org', '--repo', 'cli-2', '--index', '0'], stack.taskQueue);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(`error: ${workflowId} refused import-choose: the import is not waiting for a project choice (status: auth_failed)`);

    // Mapped while the import waits (no author known yet): applied once dave turns up, before the push.
    const mapped = await runStarter(
      ['import-map-author', '--workflow-id', workflowId, '--remote', 'dave', '--name', 'Dave Bowman', '--email', 'dave@example.com', '--json'],
      stack.taskQueue,
    );
    expect(mapped.code).toBe(0);
    expect(JSON.parse(mapped.stdout)).toEqual({
      workflowId,
      update: 'import-map-author',
      accepted: true,
      result: { mapping: { remote: 'dave', name: 'Dave Bowman', email: 'dave@example.com' }, mappedAuthors: [], waitingForAuthors: true },
    });

    const accepted = await runStarter(['import-credentials', '--workflow-id', workflowId, '--credentials', 'cli-svn'], stack.taskQueue);
    expect(accepted.code).toBe(0);
    expect(accepted.stdout.trim()).toBe('accepted credentials cli-svn; the import is now importing');

    const result = await handle.result();
    expect(result.authorsMapped.map((a) => a.remoteId)).toEqual(['dave']);
    expect(stack.emulator.imports.pushes('octo-org', 'cli-2')[0].authors.find((a) => a.remoteId === 'dave')?.name).toBe('Dave Bowman');
    expect(stack.emulator.imports.get('octo-org', 'cli-2')!.credentials?.username).toBe('cli-user');
  });

  it('import --follow shows the state and a progress bar until the end', async () => {
    const { code, stdout, stderr } = await runStarter(['import', '--owner', 'octo-org', '--repo', 'cli-3', '--vcs-url', `${SVN}/happy`, ...fast, '--follow'], stack.taskQueue);
    expect(code).toBe(0);
    // --follow samples the status every 500 ms, so on a loaded machine a short phase can pass between two
    // samples: require a progress bar with the state, in whichever of the two long phases it was sampled.
    // Progress goes to stderr; stdout carries only the result.
    expect(stderr).toMatch(/\[[#-]+\]\s+\d+% \S+ → octo-org\/\S+ · (importing · importing \d+% of 1234 commits|pushing · pushed \d+%)/);
    expect(stdout).toContain('import of https://svn.example.test/repos/happy into octo-org/cli-3: complete (subversion, 1234 commits)');
  });

  it('a bad --authors file or --lfs value is one clear line and exit code 2, and nothing starts', async () => {
    const bad = join(dir, 'bad.json');
    await writeFile(bad, JSON.stringify([{ remote: 'alice', name: 'Alice', email: 'not-an-email' }]));
    // Two refusals at once, each a process of its own.
    const [authors, lfs] = await Promise.all([
      runStarter(['import', '--owner', 'octo-org', '--repo', 'cli-4', '--vcs-url', `${SVN}/happy`, '--authors', bad], stack.taskQueue),
      runStarter(['import', '--owner', 'octo-org', '--repo', 'cli-4', '--vcs-url', `${SVN}/happy`, '--lfs', 'maybe'], stack.taskQueue),
    ]);
    expect(authors.code).toBe(2);
    expect(authors.stderr.trim()).toBe(`error: ${bad} entry 1: author mapping for "alice": email "not-an-email" is not an email address`);
    expect(lfs.code).toBe(2);
    expect(lfs.stderr).toContain('--lfs must be opt_in, opt_out or auto:SIZE');
    expect(stack.emulator.imports.get('octo-org', 'cli-4')).toBeUndefined();
  });
});
