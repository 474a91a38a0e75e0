/**
 * With a codec key configured, the Temporal server keeps only ciphertext: no history payload of a whole
 * migration (input, activity inputs and results, the workflow result) contains clear text, and the codec
 * server decodes it for the Web UI, preflight included.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import { EncryptionCodec, parseCodecKeys } from '../../src/temporal/codec';
import { startCodecServer, type RunningCodecServer } from '../../src/temporal/codec-server';
import { useStack } from '../helpers/stack';
import { runLonghaul } from '../helpers/starter';
import { eventually } from '../helpers/wait';

/**
 * Every payload anywhere in a history event (inputs, results, failures' details, headers…) except search
 * attributes: those are indexed by the server for list filters, so Temporal never passes them through a codec.
 */
function payloadsIn(value: unknown, found: Payload[] = []): Payload[] {
  if (!value || typeof value !== 'object') return found;
  if (Array.isArray(value)) {
    for (const v of value) payloadsIn(v, found);
    return found;
  }
  const obj = value as Record<string, unknown>;
  if (obj.data instanceof Uint8Array && (obj.metadata === undefined || typeof obj.metadata === 'object')) found.push(obj as Payload);
  for (const [k, v] of Object.entries(obj)) if (k !== 'searchAttributes' && v && typeof v === 'object' && !(v instanceof Uint8Array)) payloadsIn(v, found);
  return found;
}

describe('encrypted payloads', () => {
  const keyText = `it:${randomBytes(32).toString('base64')}`;
  const keys = parseCodecKeys(keyText, 'test');
  const codec = new EncryptionCodec(keys);
  const stack = useStack({ emulator: { migrations: { exportMs: 300, archiveBytes: 50_000 } }, dataConverter: { payloadCodecs: [codec] } });
  let encrypted: Client;
  let codecServer: RunningCodecServer;
  const token = randomBytes(32).toString('base64');

  beforeAll(async () => {
    encrypted = new Client({ connection: stack.client.connection, namespace: stack.client.options.namespace, dataConverter: { payloadCodecs: [codec] } });
    codecServer = await startCodecServer({ codec, port: 0, tokens: [token] });
  });
  afterAll(async () => {
    await codecServer?.close();
  });

  it('keeps no clear text of inputs or results in history, and the codec server decodes it for the UI', async () => {
    const workflowId = `encrypted-${Date.now()}`;
    const result = await encrypted.workflow.execute(orgMigration, {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [{ org: 'octo-org', repositories: ['alpha', 'beta'], lockRepositories: true, poll: { initialIntervalMs: 1000, maxIntervalMs: 1000 } }],
    });
    expect(result.state).toBe('exported');

    // The raw history, as the server stores it (no data converter on this read).
    const raw = await stack.client.workflowService.getWorkflowExecutionHistory({ namespace: stack.client.options.namespace, execution: { workflowId } });
    // Patch markers (`patched('quiet-polls')`) are written by the SDK's core and carry only the patch's id.
    const patchMarkers = (raw.history?.events ?? []).filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch');
    expect(patchMarkers.length).toBeGreaterThan(0);
    const payloads = payloadsIn((raw.history?.events ?? []).filter((e) => !patchMarkers.includes(e)));
    expect(payloads.length).toBeGreaterThan(5);
    const clearTexts = ['octo-org', 'alpha', result.archive.sha256, result.archive.path, 'json/plain'];
    for (const payload of payloads) {
      const bytes = Buffer.from(payload.data!).toString('latin1');
      for (const clear of clearTexts) expect(bytes).not.toContain(clear);
      expect(Buffer.from(payload.metadata!.encoding!).toString()).toBe('binary/encrypted');
    }

    // What the Web UI does: a CORS preflight from its origin, then POST /decode with proto3-JSON payloads.
    const preflight = await fetch(`${codecServer.url}/decode`, {
      method: 'OPTIONS',
      headers: { origin: 'http://localhost:8233', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-namespace' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/x-namespace/);
    const started = raw.history!.events![0].workflowExecutionStartedEventAttributes as temporal.api.history.v1.IWorkflowExecutionStartedEventAttributes;
    const input = started.input!.payloads![0];
    const response = await fetch(`${codecServer.url}/decode`, {
      method: 'POST',
      headers: { origin: 'http://localhost:8233', 'content-type': 'application/json', 'x-namespace': 'default', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        payloads: [
          {
            metadata: Object.fromEntries(Object.entries(input.metadata!).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
            data: Buffer.from(input.data!).toString('base64'),
          },
        ],
      }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
    const decoded = (await response.json()) as { payloads: { metadata: Record<string, string>; data: string }[] };
    const payload = decoded.payloads[0];
    const value = defaultPayloadConverter.fromPayload({
      metadata: Object.fromEntries(Object.entries(payload.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
      data: Buffer.from(payload.data, 'base64'),
    }) as { org: string; repositories: string[] };
    expect(value.org).toBe('octo-org');
    expect(value.repositories).toEqual(['alpha', 'beta']);
  });

  it('refuses a browser origin that is not the UI, and a body that is not a payload list', async () => {
    const other = await fetch(`${codecServer.url}/decode`, { method: 'OPTIONS', headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const bad = await fetch(`${codecServer.url}/decode`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: '{"nope":1}' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toMatch(/payloads/);
  });

  it('`longhaul list` names the archive from the encrypted memo with the key, marks it unreadable without it, and `status` works without it', async () => {
    const workflowId = `encrypted-list-${Date.now()}`;
    const result = await encrypted.workflow.execute(orgMigration, { taskQueue: stack.taskQueue, workflowId, args: [{ org: 'octo-org', repositories: ['gamma'], poll: { initialIntervalMs: 1000, maxIntervalMs: 1000 } }] });
    const args = ['list', '--process', 'org-migration', '--closed', '--limit', '1000', '--json'];
    const archiveListed = (env: Record<string, string>) =>
      eventually(
        async () => {
          const { code, stdout } = await runLonghaul(args, stack.taskQueue, env);
          if (code !== 0) return undefined;
          return (JSON.parse(stdout) as { workflows: { workflowId: string; archive?: { where: string; sha256?: string } }[] }).workflows.find((w) => w.workflowId === workflowId)?.archive;
        },
        'the migration listed with its archive',
        60_000,
        1_000,
      );
    expect(await archiveListed({ LONGHAUL_CODEC_KEYS: keyText })).toMatchObject({ where: result.archive.path, sha256: result.archive.sha256 });
    // Without the key the row is still listed: the memo is marked, the list does not fail.
    expect((await archiveListed({ LONGHAUL_CODEC_KEYS: '' })).where).toMatch(/^\(unreadable: encrypted, and no key is configured/);
    // `status` describes the workflow (memo included) without the key too.
    const status = await runLonghaul(['status', workflowId, '--json'], stack.taskQueue, { LONGHAUL_CODEC_KEYS: '' });
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ workflowId, workflowStatus: 'COMPLETED', process: 'org-migration' });
  });
});
