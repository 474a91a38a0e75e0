/**
 * With a codec key, a failure's message and stack trace are encrypted like every payload (`encoded-failures.ts`):
 * the raw history, read by a client without the codec, holds neither, while the CLI with the key shows the
 * message, and without it the type and that the message is encrypted.
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { temporal } from '@temporalio/proto';
import { Client } from '@temporalio/client';
import { MigrationFailure, orgMigration } from '../../src/processes/org-migration/workflow';
import { ENCRYPTED_ENCODING, longhaulDataConverter } from '../../src/temporal/codec';
import { expectFailure } from '../helpers/failures';
import { FAST_POLL } from '../helpers/presets';
import { useStack } from '../helpers/stack';
import { runLonghaul } from '../helpers/starter';

// The SDK `require`s the failure converter by its path; from the sources (.ts) that needs tsx's loader, which the
// CLI and `npm start` run under (a compiled worker requires the .js). Registered before the stack's worker starts.
const TSX_CJS_API = 'tsx/cjs/api';
beforeAll(async () => ((await import(TSX_CJS_API)) as { register(): void }).register());

/** Every failure in a history event, causes included. */
function failuresIn(value: unknown, found: temporal.api.failure.v1.IFailure[] = []): temporal.api.failure.v1.IFailure[] {
  if (!value || typeof value !== 'object' || value instanceof Uint8Array) return found;
  if (Array.isArray(value)) {
    for (const v of value) failuresIn(v, found);
    return found;
  }
  const obj = value as Record<string, unknown>;
  if (typeof obj.message === 'string' && 'stackTrace' in obj) found.push(obj);
  for (const v of Object.values(obj)) failuresIn(v, found);
  return found;
}

describe('encrypted failures', () => {
  const keyText = `failures:${randomBytes(32).toString('base64')}`;
  const dataConverter = longhaulDataConverter({ LONGHAUL_CODEC_KEYS: keyText })!;
  const stack = useStack({ emulator: { migrations: { exportMs: 500, failRepositories: ['gamma'] } }, dataConverter });

  it("keeps a failed workflow's messages and stack traces out of the raw history, and the CLI with the key shows them", async () => {
    const encrypted = new Client({ connection: stack.client.connection, namespace: stack.client.options.namespace, dataConverter });
    const workflowId = `encrypted-failure-${Date.now()}`;
    const handle = await encrypted.workflow.start(orgMigration, { taskQueue: stack.taskQueue, workflowId, args: [{ org: 'octo-org', repositories: ['gamma'], poll: FAST_POLL }] });
    // The client with the key reads the failure as it was thrown, stack trace included.
    const failure = await expectFailure(handle.result(), MigrationFailure.ExportFailed);
    expect(failure.message).toMatch(/failed on the server while exporting gamma/);
    expect(failure.stack).toMatch(/workflow/);

    // The raw history, as the server keeps it (this client has no codec).
    const raw = await stack.client.workflowService.getWorkflowExecutionHistory({ namespace: stack.client.options.namespace, execution: { workflowId } });
    const failures = failuresIn(raw.history?.events ?? []);
    expect(failures.length).toBeGreaterThan(0);
    for (const f of failures) {
      expect(f.message).toBe('Encoded failure');
      expect(f.stackTrace ?? '').toBe('');
      expect(Buffer.from(f.encodedAttributes!.metadata!.encoding!).toString()).toBe(ENCRYPTED_ENCODING);
      const sealed = Buffer.from(f.encodedAttributes!.data!).toString('latin1');
      for (const clear of ['failed on the server', 'gamma', 'octo-org', 'stack_trace', 'workflow.ts']) expect(sealed).not.toContain(clear);
    }
    // The failure's type stays readable: it is what `nonRetryableErrorTypes` and the CLI match on.
    const closed = raw.history!.events!.at(-1)!.workflowExecutionFailedEventAttributes!;
    expect(JSON.stringify(closed.failure)).toContain(MigrationFailure.ExportFailed);

    // The CLI with the key shows the message; without it, the type and that the message is encrypted.
    const withKey = await runLonghaul(['wait', workflowId, '--json'], stack.taskQueue, { LONGHAUL_CODEC_KEYS: keyText });
    expect(withKey.code, withKey.stderr).toBe(1);
    expect(JSON.parse(withKey.stdout)).toMatchObject({ workflowId, workflowStatus: 'FAILED', error: { type: MigrationFailure.ExportFailed, message: expect.stringMatching(/failed on the server while exporting gamma/) } });
    const withoutKey = await runLonghaul(['wait', workflowId], stack.taskQueue, { LONGHAUL_CODEC_KEYS: '' });
    expect(withoutKey.code, withoutKey.stderr).toBe(1);
    expect(withoutKey.stderr).toMatch(new RegExp(`error: ${workflowId} failed: ${MigrationFailure.ExportFailed}: \\(encrypted: encrypted, and no key is configured`));
    expect(withoutKey.stderr).not.toContain('failed on the server');
    const otherKey = await runLonghaul(['wait', workflowId, '--json'], stack.taskQueue, { LONGHAUL_CODEC_KEYS: `other:${randomBytes(32).toString('base64')}` });
    expect(JSON.parse(otherKey.stdout).error.message).toMatch(/^\(encrypted: payload was encrypted with key "failures", which is not configured/);
  });
});
