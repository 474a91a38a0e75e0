/**
 * The source-import workflow against the emulator, one test per row of the spec's status table
 * (real Temporal server, real worker). Scenarios are chosen by the last segment of `vcs_url`.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTimeSkippingStack } from '../helpers/stack';
import { importChooseUpdate, importCredentialsUpdate, importStatusQuery, sourceImport } from '../../src/processes/source-import/workflow';
import type { SourceImportInput } from '../../src/processes/source-import/model';
import { LonghaulProcess, LonghaulProgress, LonghaulState, LonghaulTarget } from '../../src/common/search-attributes';
import { fixtureWithImportRepos, waitForImportStatus } from '../helpers/source-import';
import { expectFailure } from '../helpers/failures';
import { FAST_POLL } from '../helpers/presets';

const SVN = 'https://svn.example.test/repos';

describe('source import: every status of the table', () => {
  let nextRepo = 0;
  const repo = () => `status-${++nextRepo}`;
  // 5 s detecting, 60 s importing, 30 s mapping, 30 s pushing at 1/20 speed: about 6 s per import, the steps
  // 1.5–3 s long, so the 1 s poller (the kit's floor) sees each even when a loaded machine delays a poll.
  const stack = useTimeSkippingStack({ emulator: { fixture: fixtureWithImportRepos('status', 20), imports: { timeScale: 0.05, importingMs: 60_000, mappingMs: 30_000, pushingMs: 30_000 } } });

  const start = (input: Omit<SourceImportInput, 'owner' | 'poll'> & { owner?: string }) =>
    stack.client.workflow.start(sourceImport, {
      taskQueue: stack.taskQueue,
      workflowId: `import-${input.repo}-${Date.now()}`,
      args: [{ owner: 'octo-org', poll: FAST_POLL, ...input }],
    });

  it('goes detecting → importing → mapping → pushing → complete and reports commits, repository and search attributes', async () => {
    const target = repo();
    const handle = await start({ repo: target, vcsUrl: `${SVN}/happy` });
    const result = await handle.result();
    const status = await handle.query(importStatusQuery);
    expect((status as { statesSeen: string[] }).statesSeen).toEqual(['detecting', 'importing', 'mapping', 'pushing', 'complete']);
    expect(result.status).toBe('complete');
    expect(result.vcs).toBe('subversion');
    expect(result.commitCount).toBe(stack.emulator.imports.options.commitCount);
    expect(result.repositoryUrl).toBe(`${stack.emulator.apiUrl}/repos/octo-org/${target}`);
    expect(result.polls).toBeGreaterThan(3);
    expect(stack.emulator.imports.status('octo-org', target)).toBe('complete');
    const description = await handle.describe();
    expect(description.typedSearchAttributes.get(LonghaulProcess)).toBe('source-import');
    expect(description.typedSearchAttributes.get(LonghaulState)).toBe('complete');
    expect(description.typedSearchAttributes.get(LonghaulTarget)).toBe(`octo-org/${target}`);
    expect(description.typedSearchAttributes.get(LonghaulProgress)).toBe(100);
  });

  // Import credentials by name, configured on the (in-process) worker as an operator does.
  process.env.LONGHAUL_IMPORT_CREDENTIALS = 'svn-auth, svn-detector, svn-upfront';
  Object.assign(process.env, {
    LONGHAUL_IMPORT_SVN_AUTH_USERNAME: 'svn-importer',
    LONGHAUL_IMPORT_SVN_AUTH_PASSWORD: 's3cret-auth-failed',
    LONGHAUL_IMPORT_SVN_UPFRONT_USERNAME: 'upfront',
    LONGHAUL_IMPORT_SVN_UPFRONT_PASSWORD: 'pa55word',
  });

  it('waits in auth_failed for credentials sent by update as a configured name, then completes', async () => {
    const target = repo();
    const handle = await start({ repo: target, vcsUrl: `${SVN}/needs-auth`, vcs: 'subversion' });
    const waiting = await waitForImportStatus(handle, (s) => s.phase === 'waiting-for-credentials', 'the wait for credentials');
    expect(waiting.status).toBe('auth_failed');
    expect(waiting.answerDeadline).toBeDefined();
    const accepted = await handle.executeUpdate(importCredentialsUpdate, { args: [{ credentials: 'svn-auth' }] });
    expect(accepted).toEqual({ credentials: 'svn-auth', status: 'importing' });
    const result = await handle.result();
    expect(result.status).toBe('complete');
    const imp = stack.emulator.imports.get('octo-org', target)!;
    expect(imp.credentials?.username).toBe('svn-importer');
    expect(imp.events.map((e) => e.kind)).toContain('patch:credentials');
  });

  it('waits in detection_needs_auth for credentials sent by update as a name whose values are files, then completes', async () => {
    const target = repo();
    const dir = await mkdtemp(join(tmpdir(), 'longhaul-cred-'));
    await writeFile(join(dir, 'username'), 'detector\n');
    await writeFile(join(dir, 'password'), 'f1le-secret\n');
    process.env.LONGHAUL_IMPORT_SVN_DETECTOR_USERNAME_FILE = join(dir, 'username');
    process.env.LONGHAUL_IMPORT_SVN_DETECTOR_PASSWORD_FILE = join(dir, 'password');
    const handle = await start({ repo: target, vcsUrl: `${SVN}/needs-auth` });
    const waiting = await waitForImportStatus(handle, (s) => s.phase === 'waiting-for-credentials', 'the wait for credentials');
    expect(waiting.status).toBe('detection_needs_auth');
    const accepted = await handle.executeUpdate(importCredentialsUpdate, { args: [{ credentials: 'svn-detector' }] });
    expect(accepted.status).toBe('detecting');
    const result = await handle.result();
    expect(result.status).toBe('complete');
    const status = await handle.query(importStatusQuery);
    expect(status.statesSeen.slice(0, 3)).toEqual(['detecting', 'detection_needs_auth', 'detecting']);
    expect(stack.emulator.imports.get('octo-org', target)!.credentials?.username).toBe('detector');
  });

  it('never stops for credentials when the input names a credential the server accepts', async () => {
    const target = repo();
    const result = await (await start({ repo: target, vcsUrl: `${SVN}/needs-auth`, credentials: 'svn-upfront' })).result();
    expect(result.status).toBe('complete');
    const kinds = stack.emulator.imports.get('octo-org', target)!.events.map((e) => e.kind);
    expect(kinds).not.toContain('patch:credentials');
  });

  it('chooses from project_choices by the input rule when detection finds several projects', async () => {
    const target = repo();
    const handle = await start({ repo: target, vcsUrl: 'https://tfs.example.test/collection/multiple-projects', projectChoice: { tfvcProject: 'Contoso' } });
    const result = await handle.result();
    expect(result.chosenProject).toEqual({ vcs: 'tfvc', tfvcProject: 'Contoso', humanName: 'Contoso (tfs)' });
    expect(result.vcs).toBe('tfvc');
    const status = await handle.query(importStatusQuery);
    expect(status.statesSeen).toContain('detection_found_multiple');
    expect(stack.emulator.imports.get('octo-org', target)!.tfvcProject).toBe('Contoso');
  });

  it('waits for import-choose when the rule does not pick exactly one project, then imports the chosen one', async () => {
    const target = repo();
    const handle = await start({ repo: target, vcsUrl: 'https://tfs.example.test/collection/multiple-projects', projectChoice: { vcs: 'tfvc' } });
    const waiting = await waitForImportStatus(handle, (s) => s.phase === 'waiting-for-choice', 'the wait for a choice');
    expect(waiting.projectChoices?.map((c) => c.humanName)).toEqual(['Subversion', 'Git', 'Fabrikam (tfs)', 'Contoso (tfs)']);
    const accepted = await handle.executeUpdate(importChooseUpdate, { args: [{ humanName: 'Git' }] });
    expect(accepted).toEqual({ choice: { vcs: 'git', humanName: 'Git' }, status: 'importing' });
    const result = await handle.result();
    expect(result.vcs).toBe('git');
    expect(result.chosenProject?.humanName).toBe('Git');
  });

  it('cancels the import and fails non-retryably, naming the URL, when detection finds nothing', async () => {
    const target = repo();
    const url = `${SVN}/nothing-found`;
    const failure = await expectFailure((await start({ repo: target, vcsUrl: url })).result(), 'ImportSourceNotFound');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain(url);
    expect(stack.emulator.imports.get('octo-org', target)).toBeUndefined();
    const last = stack.emulator.imports.all().filter((i) => i.repo === target).at(-1)!;
    expect(last.events.map((e) => e.kind)).toEqual(['put', 'delete']);
  });

  it('restarts an import that hit an error and completes when the restart gets through', async () => {
    const target = repo();
    const handle = await start({ repo: target, vcsUrl: `${SVN}/error-importing` });
    const result = await handle.result();
    expect(result.restarts).toBe(1);
    const status = await handle.query(importStatusQuery);
    expect(status.statesSeen).toContain('error');
    expect(status.statesSeen.at(-1)).toBe('complete');
    expect(stack.emulator.imports.get('octo-org', target)!.events.filter((e) => e.kind === 'patch:restart')).toHaveLength(1);
  });

  it('fails with failed_step and the message once the configured restarts are spent', async () => {
    const target = repo();
    const failure = await expectFailure((await start({ repo: target, vcsUrl: `${SVN}/error-mapping?fail_times=3`, maxRestarts: 2 })).result(), 'ImportFailed');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('failed at step mapping');
    expect(failure.message).toContain('the remote end hung up unexpectedly');
    expect(failure.message).toContain('after 2 restarts');
    expect(stack.emulator.imports.get('octo-org', target)!.events.filter((e) => e.kind === 'patch:restart')).toHaveLength(2);
    expect(stack.emulator.imports.status('octo-org', target)).toBe('error');
  });

  it('stores large files with LFS under opt_in and records the decision and the files', async () => {
    const target = repo();
    const result = await (await start({ repo: target, vcsUrl: `${SVN}/large-files`, lfs: 'opt_in' })).result();
    const expectedPaths = stack.emulator.imports.options.largeFiles.map((f) => f.path);
    expect(result.lfs?.useLfs).toBe('opt_in');
    expect(result.lfs?.largeFiles.map((f) => f.path)).toEqual(expectedPaths);
    const pushes = stack.emulator.imports.pushes('octo-org', target);
    expect(pushes).toHaveLength(1);
    expect(pushes[0].lfsObjects).toEqual(expectedPaths);
    expect(pushes[0].removedFiles).toEqual([]);
  });

  it('leaves large files out under an auto size rule they exceed', async () => {
    const target = repo();
    const result = await (await start({ repo: target, vcsUrl: `${SVN}/large-files`, lfs: { auto: { maxTotalBytes: 100_000_000 } } })).result();
    expect(result.lfs?.useLfs).toBe('opt_out');
    expect(result.lfs?.totalBytes).toBe(stack.emulator.imports.options.largeFiles.reduce((s, f) => s + f.size, 0));
    const pushes = stack.emulator.imports.pushes('octo-org', target);
    expect(pushes).toHaveLength(1);
    expect(pushes[0].useLfs).toBe('opt_out');
    expect(pushes[0].removedFiles).toEqual(stack.emulator.imports.options.largeFiles.map((f) => f.path));
    expect(pushes[0].lfsObjects).toEqual([]);
  });
});
