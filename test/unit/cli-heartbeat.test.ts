/**
 * `status` and `--follow` read a running download's progress from its heartbeat details. With a codec key those
 * details are encrypted like every payload, so the CLI decodes them through the client's codecs first.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { decodeHeartbeat } from '../../src/cli/kit/run-workflow';
import { EncryptionCodec, parseCodecKeys } from '../../src/temporal/codec';

const codec = new EncryptionCodec(parseCodecKeys(`k1:${randomBytes(32).toString('base64')}`, 'test'));

/** A handle whose client decodes as the CLI's does (the only part `decodeHeartbeat` reads). */
function handleWith(payloadCodecs: EncryptionCodec[]): WorkflowHandle {
  return { client: { options: { loadedDataConverter: { payloadConverter: defaultPayloadConverter, payloadCodecs, failureConverter: undefined } } } } as unknown as WorkflowHandle;
}

describe('decodeHeartbeat', () => {
  const progress = { offset: 512 * 1024, total: 1024 * 1024 };

  it('decodes encrypted heartbeat details through the client codec', async () => {
    const [sealed] = await codec.encode([defaultPayloadConverter.toPayload(progress)]);
    expect(Buffer.from(sealed.data!).toString()).not.toContain('offset');
    expect(await decodeHeartbeat(handleWith([codec]), sealed)).toEqual(progress);
  });

  it('reads clear details without a codec, and shows none when they cannot be read or are absent', async () => {
    expect(await decodeHeartbeat(handleWith([]), defaultPayloadConverter.toPayload(progress))).toEqual(progress);
    const [sealed] = await codec.encode([defaultPayloadConverter.toPayload(progress)]);
    expect(await decodeHeartbeat(handleWith([]), sealed)).toBeUndefined();
    expect(await decodeHeartbeat(handleWith([codec]), undefined)).toBeUndefined();
  });
});
