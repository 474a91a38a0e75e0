import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ApplicationFailure, defaultPayloadConverter, type Payload } from '@temporalio/common';
import { CodecKeyError, EncryptionCodec, ENCRYPTED_ENCODING, codecKeysFromEnv, encodedFailuresConverterPath, longhaulDataConverter, parseCodecKeys, readingOrMarking } from '../../src/temporal/codec';
import { failureConverter as encodedFailures } from '../../src/temporal/encoded-failures';
import { failureMessage } from '../../src/temporal/tolerant-client';

const key = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;
const clear = (value: unknown): Payload => defaultPayloadConverter.toPayload(value);
const text = (p: Payload) => Buffer.from(p.data ?? new Uint8Array()).toString('latin1');

describe('payload encryption codec', () => {
  it('seals a payload so neither its data nor its metadata can be read, and opens it again', async () => {
    const codec = new EncryptionCodec(parseCodecKeys(key('k1'), 'test'));
    const original = clear({ author: 'Mona Lisa <mona@example.com>' });
    const [sealed] = await codec.encode([original]);
    expect(new TextDecoder().decode(sealed.metadata!.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(new TextDecoder().decode(sealed.metadata!['encryption-key-id'])).toBe('k1');
    expect(text(sealed)).not.toContain('mona@example.com');
    expect(text(sealed)).not.toContain('json/plain');
    const [opened] = await codec.decode([sealed]);
    expect(defaultPayloadConverter.fromPayload(opened)).toEqual({ author: 'Mona Lisa <mona@example.com>' });
  });

  it('encrypts with the first key and still decrypts payloads sealed with an older listed key (rotation)', async () => {
    const old = key('2026-05');
    const [sealedWithOld] = await new EncryptionCodec(parseCodecKeys(old, 'test')).encode([clear('kept')]);
    const rotated = new EncryptionCodec(parseCodecKeys(`${key('2026-11')},${old}`, 'test'));
    const [sealedNow] = await rotated.encode([clear('new')]);
    expect(new TextDecoder().decode(sealedNow.metadata!['encryption-key-id'])).toBe('2026-11');
    const [a, b] = await rotated.decode([sealedWithOld, sealedNow]);
    expect(defaultPayloadConverter.fromPayload(a)).toBe('kept');
    expect(defaultPayloadConverter.fromPayload(b)).toBe('new');
  });

  it('names the missing key when a payload was sealed with a key that is not configured', async () => {
    const [sealed] = await new EncryptionCodec(parseCodecKeys(key('gone'), 'test')).encode([clear(1)]);
    await expect(new EncryptionCodec(parseCodecKeys(key('other'), 'test')).decode([sealed])).rejects.toThrow(/key "gone".*not configured/);
  });

  it('refuses a tampered payload instead of returning garbage', async () => {
    const codec = new EncryptionCodec(parseCodecKeys(key('k'), 'test'));
    const [sealed] = await codec.encode([clear('integrity')]);
    const data = Buffer.from(sealed.data!);
    data[20] ^= 0xff;
    await expect(codec.decode([{ ...sealed, data }])).rejects.toThrow();
  });

  it('passes payloads written before encryption was enabled through unchanged', async () => {
    const codec = new EncryptionCodec(parseCodecKeys(key('k'), 'test'));
    const [out] = await codec.decode([clear('old and clear')]);
    expect(defaultPayloadConverter.fromPayload(out)).toBe('old and clear');
  });

  it.each([
    ['no-colon-here', /entry 1 must be "id:base64key"/],
    ['bad id!:AAAA', /key id "bad id!"/],
    [`short:${Buffer.alloc(16).toString('base64')}`, /must be 32 bytes.*got 16/],
    [`${key('twice')},twice:${randomBytes(32).toString('base64')}`, /listed twice/],
  ])('rejects the key list %s with a clear error', (list, message) => {
    expect(() => parseCodecKeys(list, 'LONGHAUL_CODEC_KEYS')).toThrow(CodecKeyError);
    expect(() => parseCodecKeys(list, 'LONGHAUL_CODEC_KEYS')).toThrow(message);
  });

  it('reads keys from LONGHAUL_CODEC_KEYS, and none means payloads stay as they are', () => {
    expect(codecKeysFromEnv({})).toEqual([]);
    expect(codecKeysFromEnv({ LONGHAUL_CODEC_KEYS: `# comment\n${key('a')}\n${key('b')}` }).map((k) => k.id)).toEqual(['a', 'b']);
    expect(() => codecKeysFromEnv({ LONGHAUL_CODEC_KEY_FILE: '/nonexistent/longhaul-key' })).toThrow(/cannot read/);
  });

  it('reads what it can and marks the rest when reading is not essential (a memo in `list`), without failing', async () => {
    const k1 = key('k1');
    const [sealed] = await new EncryptionCodec(parseCodecKeys(k1, 'test')).encode([clear({ url: 's3://b/k' })]);
    const [sealedElsewhere] = await new EncryptionCodec(parseCodecKeys(key('gone'), 'test')).encode([clear(1)]);
    const withKey = readingOrMarking([new EncryptionCodec(parseCodecKeys(k1, 'test'))]);
    const [opened, plain, missing] = await withKey.decode([sealed, clear('clear'), sealedElsewhere]);
    expect(defaultPayloadConverter.fromPayload(opened)).toEqual({ url: 's3://b/k' });
    expect(defaultPayloadConverter.fromPayload(plain)).toBe('clear');
    expect(defaultPayloadConverter.fromPayload(missing)).toEqual({ unreadable: expect.stringMatching(/key "gone".*not configured/) });
    // No key at all: the sealed payload is marked, where the default converter would throw on its encoding.
    const [unkeyed] = await readingOrMarking([]).decode([sealed]);
    expect(defaultPayloadConverter.fromPayload(unkeyed)).toEqual({ unreadable: expect.stringContaining('no key is configured') });
  });
});

describe('encoded failures', () => {
  const reader = (codecs: EncryptionCodec[]) => ({ connection: undefined as never, options: { namespace: 'default', loadedDataConverter: { payloadCodecs: codecs, payloadConverter: defaultPayloadConverter } } });

  it("hide a failure's message and stack trace in an encrypted payload that `failureMessage` opens with the key, and marks encrypted without it", async () => {
    const codec = new EncryptionCodec(parseCodecKeys(key('f1'), 'test'));
    const error = ApplicationFailure.retryable('GET /orgs/octo-org/migrations/7 answered 502: upstream secret', 'ApiUnavailable');
    const failure = encodedFailures.errorToFailure(error, defaultPayloadConverter);
    expect(failure.message).toBe('Encoded failure');
    expect(failure.stackTrace).toBe('');
    failure.encodedAttributes = (await codec.encode([failure.encodedAttributes!]))[0];
    expect(text(failure.encodedAttributes)).not.toContain('upstream secret');

    expect(await failureMessage(reader([codec]), failure)).toBe('GET /orgs/octo-org/migrations/7 answered 502: upstream secret');
    expect(await failureMessage(reader([]), failure)).toMatch(/^\(encrypted: encrypted, and no key is configured/);
    expect(await failureMessage(reader([new EncryptionCodec(parseCodecKeys(key('other'), 'test'))]), failure)).toMatch(/^\(encrypted: payload was encrypted with key "f1"/);
    // A failure written without encoded attributes (no key, or before this release) reads as it is.
    expect(await failureMessage(reader([codec]), { message: 'plain' })).toBe('plain');
  });

  it('are what the data converter of a worker or client with a key uses, and not without one', () => {
    expect(longhaulDataConverter({ LONGHAUL_CODEC_KEYS: key('k') })?.failureConverterPath).toBe(encodedFailuresConverterPath());
    expect(longhaulDataConverter({})).toBeUndefined();
  });
});
