/**
 * The source-import workflow's updates: author mapping applied before the push (proved by what the
 * emulator pushed), validators refusing bad or untimely answers, and the history of every run in
 * this file scanned for the secrets the tests used.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import {
  importChooseUpdate,
  importCredentialsUpdate,
  importMapAuthorUpdate,
  importStatusQuery,
} from '../../src/processes/source-import/workflow';
import { TEST_TOKEN } from '../helpers/emulator';
import { useStack } from '../helpers/stack';
import { fixtureWithImportRepos, historyText, startImport, SVN, waitForImportStatus } from '../helpers/source-import';

// Secrets this file hands to the worker (and one pasted by mistake into an update).
// Two import credentials configured by name: one in variables, one in files (`_FILE`).
const ENV_SECRET = { name: 'env-cred', username: 'svc-import', password: 'pw-9d1f7c2b-env-secret' };
const FILE_SECRET = { name: 'file-cred', username: 'file-user', password: 'pw-3e8a0b5d-file-secret' };
const PASTED_SECRET = 'pw-77aa21c4-pasted-by-mistake-0123456789abcdef';

/**
 * The emulator's clock: wall time, except that a test can hold it and step it forward. The import's state
 * advances only from this clock, so a held import stays in the step it is in however slowly the machine runs.
 */
const emulatorClock = {
  heldAt: undefined as number | undefined,
  shiftMs: 0,
  now(): number {
    return this.heldAt ?? Date.now() + this.shiftMs;
  },
  hold(): void {
    this.heldAt = this.now();
  },
  step(ms: number): void {
    this.heldAt = this.now() + ms;
  },
  /** Runs on from where it was held: time never goes backwards. */
  release(): void {
    if (this.heldAt !== undefined) this.shiftMs = this.heldAt - Date.now();
    this.heldAt = undefined;
  },
};

describe('source import: updates and secrets', () => {
  // 20 s detecting, 30 s importing, 160 s mapping, 30 s pushing at 1/20 speed: mapping leaves 8 s between the
  // last author turning up and the push. The test of untimely answers holds the emulator clock instead of
  // racing that window (two CI runs under load missed it: the import was complete before the test looked).
  const stack = useStack({
    emulator: {
      fixture: fixtureWithImportRepos('updates', 10),
      imports: { timeScale: 0.05, detectingMs: 20_000, mappingMs: 160_000, pushingMs: 30_000 },
      clock: () => emulatorClock.now(),
    },
  });
  let nextRepo = 0;
  const repo = () => `updates-${++nextRepo}`;
  const handles: WorkflowHandle[] = [];

  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'longhaul-import-secret-'));
    await writeFile(join(dir, 'username'), `${FILE_SECRET.username}\n`);
    await writeFile(join(dir, 'password'), `${FILE_SECRET.password}\n`);
    Object.assign(process.env, {
      LONGHAUL_IMPORT_CREDENTIALS: `${ENV_SECRET.name},${FILE_SECRET.name}`,
      LONGHAUL_IMPORT_ENV_CRED_USERNAME: ENV_SECRET.username,
      LONGHAUL_IMPORT_ENV_CRED_PASSWORD: ENV_SECRET.password,
      LONGHAUL_IMPORT_FILE_CRED_USERNAME_FILE: join(dir, 'username'),
      LONGHAUL_IMPORT_FILE_CRED_PASSWORD_FILE: join(dir, 'password'),
    });
  });
  afterAll(() => {
    for (const name of ['LONGHAUL_IMPORT_CREDENTIALS', 'LONGHAUL_IMPORT_ENV_CRED_USERNAME', 'LONGHAUL_IMPORT_ENV_CRED_PASSWORD', 'LONGHAUL_IMPORT_FILE_CRED_USERNAME_FILE', 'LONGHAUL_IMPORT_FILE_CRED_PASSWORD_FILE']) delete process.env[name];
  });

  const start = async (input: Parameters<typeof startImport>[1]) => {
    const handle = await startImport(stack, input);
    handles.push(handle);
    return handle;
  };

  /** The reason an update was refused (validator) or failed (handler). */
  async function refusal(promise: Promise<unknown>): Promise<string> {
    const err = await promise.then(
      () => expect.fail('the update should have been refused'),
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
    return (err as WorkflowUpdateFailedError).cause?.message ?? '';
  }

  it('maps authors from the input and from an update before anything is pushed', async () => {
    const target = repo();
    const handle = await start({
      repo: target,
      vcsUrl: `${SVN}/happy`,
      authors: [
        { remote: 'alice', name: 'Alice Liddell', email: 'alice@example.com' },
        { remote: 'bob', name: 'Bob Builder', email: 'bob@example.com' },
      ],
    });
    // Sent while detection runs, before any author exists: recorded, applied once carol turns up.
    const accepted = await handle.executeUpdate(importMapAuthorUpdate, { args: [{ remote: 'carol', name: 'Carol Danvers', email: 'carol@example.com' }] });
    expect(accepted).toEqual({ mapping: { remote: 'carol', name: 'Carol Danvers', email: 'carol@example.com' }, mappedAuthors: [], waitingForAuthors: true });

    const result = await handle.result();
    expect(result.authorsMapped.map((a) => [a.remoteId, a.name, a.email])).toEqual([
      ['alice', 'Alice Liddell', 'alice@example.com'],
      ['bob', 'Bob Builder', 'bob@example.com'],
      ['carol', 'Carol Danvers', 'carol@example.com'],
    ]);
    expect(result.unmatchedMappings).toEqual([]);
    expect(result.warnings).toEqual([]);

    // The proof: one push only (no rewrite), and it carried the mapped identities.
    const pushes = stack.emulator.imports.pushes('octo-org', target);
    expect(pushes).toHaveLength(1);
    const pushed = Object.fromEntries(pushes[0].authors.map((a) => [a.remoteId, `${a.name} <${a.email}>`]));
    const guid = stack.emulator.imports.get('octo-org', target)!.guid;
    expect(pushed).toEqual({
      alice: 'Alice Liddell <alice@example.com>',
      bob: 'Bob Builder <bob@example.com>',
      carol: 'Carol Danvers <carol@example.com>',
      dave: `dave <dave@${guid}>`,
    });
    const events = stack.emulator.imports.get('octo-org', target)!.events;
    const pushAt = events.find((e) => e.kind === 'push')!.at;
    const authorPatches = events.filter((e) => e.kind === 'patch:author');
    expect(authorPatches).toHaveLength(3);
    for (const patch of authorPatches) expect(patch.at).toBeLessThan(pushAt);
  });

  it('refuses bad or untimely answers with a reason and accepts a good one', async () => {
    const target = repo();
    const handle = await start({ repo: target, vcsUrl: `${SVN}/needs-auth`, vcs: 'subversion' });
    await waitForImportStatus(handle, (s) => s.phase === 'waiting-for-credentials', 'the wait for credentials');

    // env: and file: references are refused by the validator, before anything is read or recorded.
    for (const credentials of ['file:/proc/self/environ', 'env:GITHUB_TOKEN']) {
      expect(await refusal(handle.executeUpdate(importCredentialsUpdate, { args: [{ credentials }] }))).toContain('which is refused: name a secret configured on the workers (LONGHAUL_IMPORT_CREDENTIALS); nothing was read or sent');
    }
    // A secret pasted in place of a name: refused by the validator, never recorded.
    expect(await refusal(handle.executeUpdate(importCredentialsUpdate, { args: [{ credentials: PASTED_SECRET }] }))).toBe(
      'credentials looks like a secret: name a source-import credential configured on the workers (LONGHAUL_IMPORT_CREDENTIALS), never the secret itself',
    );
    // A name the workers do not have: the handler's activity fails, naming what is configured and not what was
    // sent; the workflow keeps waiting.
    expect(await refusal(handle.executeUpdate(importCredentialsUpdate, { args: [{ credentials: 'not-configured' }] }))).toBe(
      `the credentials were not applied: no import credential of that name on this worker (configured: ${ENV_SECRET.name}, ${FILE_SECRET.name})`,
    );
    expect(await refusal(handle.executeUpdate(importChooseUpdate, { args: [{ index: 0 }] }))).toBe(
      'the import is not waiting for a project choice (status: auth_failed)',
    );
    expect(await refusal(handle.executeUpdate(importMapAuthorUpdate, { args: [{ remote: 'alice', name: 'Alice', email: 'not-an-email' }] }))).toContain(
      'is not an email address',
    );
    expect((await handle.query(importStatusQuery)).phase).toBe('waiting-for-credentials');

    // Held from here: the import moves only when this test steps the clock.
    emulatorClock.hold();
    try {
      const accepted = await handle.executeUpdate(importCredentialsUpdate, { args: [{ credentials: ENV_SECRET.name }] });
      expect(accepted.status).toBe('importing');
      expect(await refusal(handle.executeUpdate(importCredentialsUpdate, { args: [{ credentials: FILE_SECRET.name }] }))).toBe(
        'the import is not waiting for credentials (status: importing)',
      );

      // Importing runs 1.5 s from the accepted credentials, mapping the next 8 s, pushing the 1.5 s after that
      // (transitions happen at the instant they are due). 2 s on: mapping, every author known.
      emulatorClock.step(2_000);
      await waitForImportStatus(handle, (s) => s.status === 'mapping' && s.authorsComplete, 'every author to be known');
      expect(await refusal(handle.executeUpdate(importMapAuthorUpdate, { args: [{ remote: 'zed', name: 'Zed', email: 'zed@example.com' }] }))).toBe(
        'no author of this import matches "zed" (authors: alice, bob, carol, dave)',
      );
      // 10 s on: half a second into the push.
      emulatorClock.step(8_000);
      await waitForImportStatus(handle, (s) => s.status === 'pushing', 'the push');
      expect(await refusal(handle.executeUpdate(importMapAuthorUpdate, { args: [{ remote: 'alice', name: 'Alice', email: 'alice@example.com' }] }))).toBe(
        'too late: the import is pushing; authors can only be mapped before the push',
      );
    } finally {
      emulatorClock.release();
    }

    expect((await handle.result()).status).toBe('complete');
    expect(stack.emulator.imports.pushes('octo-org', target).every((p) => p.authors.every((a) => a.name !== 'Alice'))).toBe(true);
  });

  it('refuses project choices that are not exactly one of those offered', async () => {
    const target = repo();
    const handle = await start({ repo: target, vcsUrl: 'https://tfs.example.test/collection/multiple-projects', credentials: FILE_SECRET.name });
    await waitForImportStatus(handle, (s) => s.phase === 'waiting-for-choice', 'the wait for a choice');
    expect(await refusal(handle.executeUpdate(importChooseUpdate, { args: [{ index: 9 }] }))).toBe(
      'index 9 is not one of the offered choices (0: Subversion, 1: Git, 2: Fabrikam (tfs), 3: Contoso (tfs))',
    );
    expect(await refusal(handle.executeUpdate(importChooseUpdate, { args: [{ vcs: 'tfvc' }] }))).toContain('2 offered choices match');
    expect(await refusal(handle.executeUpdate(importChooseUpdate, { args: [{ vcs: 'perforce' }] }))).toContain('no offered choice matches');
    expect(await refusal(handle.executeUpdate(importCredentialsUpdate, { args: [{ credentials: ENV_SECRET.name }] }))).toBe(
      'the import is not waiting for credentials (status: detection_found_multiple)',
    );
    const accepted = await handle.executeUpdate(importChooseUpdate, { args: [{ index: 2 }] });
    expect(accepted.choice).toEqual({ vcs: 'tfvc', tfvcProject: 'Fabrikam', humanName: 'Fabrikam (tfs)' });
    const result = await handle.result();
    expect(result.vcs).toBe('tfvc');
    // The file-backed credential went to the server with the start request.
    expect(stack.emulator.imports.get('octo-org', target)!.credentials?.username).toBe(FILE_SECRET.username);
  });

  it('keeps every secret it used out of the workflow histories of this file', async () => {
    // The secrets were really used: the server holds digests of both passwords.
    const digests = stack.emulator.imports.all().map((i) => i.credentials?.passwordSha256);
    const sha = (s: string) => createHash('sha256').update(s).digest('hex');
    expect(digests).toContain(sha(ENV_SECRET.password));
    expect(digests).toContain(sha(FILE_SECRET.password));

    expect(handles.length).toBeGreaterThanOrEqual(3);
    for (const handle of handles) {
      const text = await historyText(handle);
      // Positive control: the scan reads payloads (the input's URL and references are in there).
      expect(text.includes('https://svn.example.test/repos/') || text.includes('https://tfs.example.test/'), 'payloads were decoded').toBe(true);
      for (const secret of [ENV_SECRET.password, `${ENV_SECRET.username}:${ENV_SECRET.password}`, FILE_SECRET.password, PASTED_SECRET, TEST_TOKEN]) {
        expect(text.includes(secret), `history of ${handle.workflowId} contains a secret`).toBe(false);
      }
    }
    // The names did go through history (that is what they are for).
    expect((await historyText(handles[1])).includes(`"${ENV_SECRET.name}"`)).toBe(true);
  });
});
