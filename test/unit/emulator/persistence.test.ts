/**
 * Emulator state in a data directory: every module's state (and the storage origin's objects and signing
 * secret) comes back after a restart exactly as it was saved; a mutating request's change is on disk when its
 * answer arrives; a file that cannot be read back stops the emulator with an `EmulatorStateError` and is
 * left as it was; the codec keeps shared objects shared and refuses what it cannot save.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { call } from '../../helpers/emulator-http';
import { startTestEmulator } from '../../helpers/emulator';
import type { Emulator, EmulatorOptions } from '@longhaul/emulator';
import { decodeState, encodeState } from '../../../packages/emulator/src/persistence/codec';
import { EmulatorStateError, STATE_FILE } from '../../../packages/emulator/src/persistence/store';

const START = Date.UTC(2026, 4, 4, 9, 0, 0);
let now = START;
const open: Emulator[] = [];

async function emulatorIn(dataDir: string, options: EmulatorOptions = {}): Promise<Emulator> {
  const e = await startTestEmulator({ port: 0, storagePort: 0, clock: () => now, dataDir, migrations: { exportMs: 10_000 }, ...options });
  open.push(e);
  return e;
}

afterEach(async () => {
  for (const e of open.splice(0)) await e.close();
  now = START;
});

const tempDir = () => mkdtemp(join(tmpdir(), 'longhaul-emulator-state-'));
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
// A service's path under its base URL (each Google API is at the root of its own origin: pathname `/`).
const at = (base: string, path: string) => `${new URL(base).pathname.replace(/\/$/, '')}${path}`;

/** Every durable part of an emulator as saved (each module's state with `durable`, and storage). */
const encodedParts = (e: Emulator) => Object.fromEntries(Object.entries(e.persistence!.parts()).map(([name, part]) => [name, encodeState(part.snapshot())]));

/** One change in every module, through HTTP as a client makes it. */
async function changeEverything(e: Emulator): Promise<{ migrationId: number; hookId: number; operation: string }> {
  const migration = await call(e.apiUrl, 'POST', '/orgs/octo-org/migrations', { body: { repositories: ['alpha', 'beta'], lock_repositories: true } });
  expect(migration.status).toBe(201);
  expect((await call(e.apiUrl, 'PUT', '/repos/octo-org/gamma/import', { body: { vcs_url: 'https://svn.example.test/happy', vcs: 'subversion' } })).status).toBe(201);
  const hook = await call(e.apiUrl, 'POST', '/orgs/octo-org/hooks', { body: { name: 'web', config: { url: 'https://example.test/hook' } } });
  expect(hook.status).toBe(201);
  const hookId = (hook.json as { id: number }).id;
  expect((await call(e.apiUrl, 'POST', `/orgs/octo-org/hooks/${hookId}/pings`)).status).toBe(204);
  expect((await call(e.apiUrl, 'GET', '/orgs/octo-org/events')).status).toBe(200);
  const keys = e.serviceUrl('google-apikeys');
  const deleted = await call(keys, 'DELETE', at(keys, '/v2/projects/demo-project/locations/global/keys/demo-key-1'));
  expect(deleted.status).toBe(200);
  const logging = e.serviceUrl('google-logging');
  expect((await call(logging, 'POST', at(logging, '/v2/projects/demo-project/locations/global/buckets:createAsync?bucketId=audit'), { body: {} })).status).toBe(200);
  const entry = { logName: 'projects/demo-project/logs/feeds', resource: { type: 'global' }, insertId: '1', timestamp: new Date(START).toISOString(), jsonPayload: { n: 1 } };
  expect((await call(logging, 'POST', at(logging, '/v2/entries:write'), { body: { entries: [entry] } })).status).toBe(200);
  const dns = e.serviceUrl('google-dns');
  const change = { additions: [{ name: 'api.demo.example.com.', type: 'A', ttl: 300, rrdatas: ['192.0.2.20'] }] };
  expect((await call(dns, 'POST', at(dns, '/dns/v1/projects/demo-project/managedZones/demo-zone/changes'), { body: change })).status).toBe(200);
  return { migrationId: (migration.json as { id: number }).id, hookId, operation: (deleted.json as { name: string }).name };
}

describe('emulator state in a data directory', () => {
  it('restores every module and the storage origin exactly as saved, and carries on from there', async () => {
    const dir = await tempDir();
    const first = await emulatorIn(dir);
    const { migrationId, hookId } = await changeEverything(first);
    now += 4_000;
    const signedBefore = new URL(first.migrations.archiveUrl(migrationId)!);
    await first.close();
    const saved = encodedParts(first);
    expect(Object.keys(saved).sort()).toEqual(['feeds', 'google', 'hooks', 'imports', 'loggingEntries', 'migrations', 'storage']);

    const second = await emulatorIn(dir);
    expect(encodedParts(second)).toEqual(saved);
    // The restored state behaves: locks, the export's timing on the emulator clock, the same archive bytes.
    expect(second.migrations.isLocked('octo-org', 'alpha')).toBe(true);
    expect(second.migrations.stateOf(migrationId)).toBe('exporting');
    expect(second.imports.all()).toHaveLength(1);
    expect(second.hooks.pings(hookId)).toHaveLength(1);
    expect(second.google.apikeys.isDeleted('projects/demo-project/locations/global/keys/demo-key-1')).toBe(true);
    expect(second.google.dns.rrsets('demo-project', 'demo-zone').map((r) => r.name)).toContain('api.demo.example.com.');
    expect(second.loggingEntries.entries()).toHaveLength(1);
    now += 6_000;
    const archive = await call(second.apiUrl, 'GET', `/orgs/octo-org/migrations/${migrationId}/archive`);
    expect(archive.status).toBe(302);
    const fresh = await request(archive.headers.location);
    const bytes = Buffer.from(await fresh.body.arrayBuffer());
    expect(sha256(bytes)).toBe(sha256(first.migrations.archiveBytes(migrationId)!));
    // A URL signed before the restart is still valid (same secret), with the same validators.
    const old = await request(`${second.storage.baseUrl}${signedBefore.pathname}${signedBefore.search}`);
    expect(old.statusCode).toBe(200);
    expect(old.headers.etag).toBe(fresh.headers.etag);
    expect(sha256(Buffer.from(await old.body.arrayBuffer()))).toBe(sha256(bytes));
    // Ids go on from where they were.
    const next = await call(second.apiUrl, 'POST', '/orgs/octo-org/migrations', { body: { repositories: ['gamma'] } });
    expect((next.json as { id: number }).id).toBe(migrationId + 1);
  });

  it('keeps of each feed the events a page can still show, not every event ever produced', async () => {
    const dir = await tempDir();
    const first = await emulatorIn(dir, { feeds: { initialEvents: 12, windowSize: 5 } });
    expect((await call(first.apiUrl, 'GET', '/orgs/octo-org/events')).status).toBe(200);
    const ids = (first.feeds.produced('/orgs/octo-org/events') as { id: string }[]).map((e) => e.id);
    expect(ids).toHaveLength(12);
    await first.close();
    const second = await emulatorIn(dir, { feeds: { initialEvents: 12, windowSize: 5 } });
    expect((second.feeds.produced('/orgs/octo-org/events') as { id: string }[]).map((e) => e.id)).toEqual(ids.slice(-5));
    expect(second.feeds.window('/orgs/octo-org/events')).toEqual(first.feeds.window('/orgs/octo-org/events'));
  });

  it('has a mutating request’s change on disk when its answer arrives', async () => {
    const dir = await tempDir();
    const e = await emulatorIn(dir);
    const res = await call(e.apiUrl, 'POST', '/orgs/octo-org/migrations', { body: { repositories: ['alpha'] } });
    const { guid } = res.json as { guid: string };
    expect(await readFile(join(dir, STATE_FILE), 'utf8')).toContain(guid);
  });

  it('keeps memory-only emulators off the disk', async () => {
    const e = await startTestEmulator({ port: 0 });
    open.push(e);
    expect(e.persistence).toBeUndefined();
  });

  it('refuses a torn or foreign state file with EmulatorStateError naming it, and leaves it as it was', async () => {
    for (const content of ['{"format":1,"parts":{"migrations":{"nextId":8', 'not json', '{"format":99,"parts":{}}', '{"format":1,"parts":{"migrations":{"nextId":1}}}']) {
      const dir = await tempDir();
      await writeFile(join(dir, STATE_FILE), content);
      const failure = await emulatorIn(dir).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failure).toBeInstanceOf(EmulatorStateError);
      expect((failure as Error).message).toContain(join(dir, STATE_FILE));
      expect(await readFile(join(dir, STATE_FILE), 'utf8')).toBe(content);
    }
  });

  it('ignores a temporary file left by a write that was killed, and loads the last complete state', async () => {
    const dir = await tempDir();
    const first = await emulatorIn(dir);
    await call(first.apiUrl, 'POST', '/orgs/octo-org/migrations', { body: { repositories: ['alpha'] } });
    await first.close();
    await writeFile(join(dir, `${STATE_FILE}.tmp`), '{"format":1,"parts":{"migr');
    const second = await emulatorIn(dir);
    expect(second.migrations.all()).toHaveLength(1);
  });
});

describe('emulator state codec', () => {
  it('round-trips Maps, Sets, Buffers, Dates, undefined, non-finite numbers and objects with a $t key', () => {
    const value = { m: new Map<unknown, unknown>([[1, { a: undefined }], ['k', new Set([1, 2])]]), b: Buffer.from('bytes'), d: new Date(START), n: [Infinity, -Infinity, undefined, 0], odd: { $t: 'Map', v: 1 } };
    const back = decodeState(JSON.parse(JSON.stringify(encodeState(value))));
    expect(back).toEqual(value);
    expect((back as typeof value).n[2]).toBeUndefined();
  });

  it('keeps an object reached twice as one object, cycles included', () => {
    const shared: Record<string, unknown> = { step: 'importing' };
    shared.self = shared;
    const value = { byKey: new Map([['a/b', shared]]), history: [shared] };
    const back = decodeState(JSON.parse(JSON.stringify(encodeState(value)))) as typeof value;
    expect(back.history[0]).toBe(back.byKey.get('a/b'));
    expect(back.history[0].self).toBe(back.history[0]);
    back.history[0].step = 'complete';
    expect(back.byKey.get('a/b')!.step).toBe('complete');
  });

  it('refuses a function or a class instance, naming where it is', () => {
    expect(() => encodeState({ ops: new Map([['x', { run: () => 1 }]]) })).toThrow(/state\.ops\.get\(x\)\.run is a function/);
    expect(() => encodeState({ when: [new URL('http://x')] })).toThrow(/state\.when\[0\] is a URL/);
  });
});
