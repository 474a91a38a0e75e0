/**
 * Encrypted payloads: an AES-256-GCM `PayloadCodec` applied by the worker and every client when a key is
 * configured, so workflow inputs, results, signals, updates, queries' answers and activity payloads reach the
 * Temporal server (and its history) only as ciphertext. Author names and e-mails, DNS records and event ids
 * are user data; the server need not read them.
 *
 * Keys are named (`id:base64key`), so they can be rotated: the first key encrypts, every listed key decrypts,
 * and each encrypted payload carries the id of the key that sealed it.
 *
 *   LONGHAUL_CODEC_KEYS=2026-11:BASE64,2026-05:BASE64      # or
 *   LONGHAUL_CODEC_KEY_FILE=/run/secrets/longhaul-codec     # one `id:base64key` per line, newest first
 *
 * `openssl rand -base64 32` makes a key.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { setting } from '../settings';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface CodecKey {
  id: string;
  /** 32 bytes. */
  key: Buffer;
}

/** A codec key list that is malformed, or a payload sealed with a key that is not configured. */
export class CodecKeyError extends Error {
  override readonly name = 'CodecKeyError';
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Parses `id:base64key` entries (comma or newline separated; `#` starts a comment line). */
export function parseCodecKeys(text: string, source: string): CodecKey[] {
  const entries = text
    .split(/[\n,]/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const keys = entries.map((entry, index) => {
    const colon = entry.indexOf(':');
    if (colon <= 0) throw new CodecKeyError(`${source}: entry ${index + 1} must be "id:base64key"`);
    const id = entry.slice(0, colon);
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(id)) throw new CodecKeyError(`${source}: key id ${JSON.stringify(id)} must be 1–64 of A–Z a–z 0–9 . _ -`);
    const key = Buffer.from(entry.slice(colon + 1), 'base64');
    if (key.length !== 32) throw new CodecKeyError(`${source}: key ${id} must be 32 bytes of base64 (openssl rand -base64 32), got ${key.length} bytes`);
    return { id, key };
  });
  const ids = new Set<string>();
  for (const { id } of keys) {
    if (ids.has(id)) throw new CodecKeyError(`${source}: key id ${id} is listed twice`);
    ids.add(id);
  }
  return keys;
}

/** The configured keys (`LONGHAUL_CODEC_KEYS`, else `LONGHAUL_CODEC_KEY_FILE`), or none: payloads stay clear. */
export function codecKeysFromEnv(env: NodeJS.ProcessEnv = process.env): CodecKey[] {
  const keys = setting('LONGHAUL_CODEC_KEYS', env);
  if (keys) return requireSome(parseCodecKeys(keys, 'LONGHAUL_CODEC_KEYS'), 'LONGHAUL_CODEC_KEYS');
  const file = setting('LONGHAUL_CODEC_KEY_FILE', env);
  if (!file) return [];
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CodecKeyError(`LONGHAUL_CODEC_KEY_FILE: cannot read ${file}: ${(err as Error).message}`);
  }
  return requireSome(parseCodecKeys(text, file), file);
}

function requireSome(keys: CodecKey[], source: string): CodecKey[] {
  if (keys.length === 0) throw new CodecKeyError(`${source} is set but lists no key`);
  return keys;
}

/** AES-256-GCM over the whole serialized payload (metadata included), sealed with the first key. */
export class EncryptionCodec implements PayloadCodec {
  private readonly byId: Map<string, Buffer>;
  private readonly current: CodecKey;

  constructor(keys: readonly CodecKey[]) {
    if (keys.length === 0) throw new CodecKeyError('EncryptionCodec needs at least one key');
    this.current = keys[0];
    this.byId = new Map(keys.map((k) => [k.id, k.key]));
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
      const clear = temporal.api.common.v1.Payload.encode(payload).finish();
      const sealed = Buffer.concat([iv, cipher.update(clear), cipher.final(), cipher.getAuthTag()]);
      return {
        metadata: { encoding: encoder.encode(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: encoder.encode(this.current.id) },
        data: sealed,
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const encoding = payload.metadata?.encoding;
      // Payloads written before a key was configured stay readable.
      if (!encoding || decoder.decode(encoding) !== ENCRYPTED_ENCODING) return payload;
      const idBytes = payload.metadata?.[KEY_ID_METADATA];
      const id = idBytes ? decoder.decode(idBytes) : '(none)';
      const key = this.byId.get(id);
      if (!key) throw new CodecKeyError(`payload was encrypted with key ${JSON.stringify(id)}, which is not configured (LONGHAUL_CODEC_KEYS / LONGHAUL_CODEC_KEY_FILE)`);
      const data = Buffer.from(payload.data ?? new Uint8Array());
      if (data.length < IV_BYTES + TAG_BYTES) throw new CodecKeyError(`encrypted payload of ${data.length} bytes is too short`);
      const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      const clear = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
      return temporal.api.common.v1.Payload.decode(clear) as Payload;
    });
  }
}

/** What a payload that `readingOrMarking` could not decode reads as. */
export interface UnreadablePayload {
  unreadable: string;
}

/**
 * For reading what is not essential (a workflow's memo in `longhaul list`): `codecs` as they are, except that a
 * payload they cannot decode (sealed with a key this process lacks, or encrypted while it has no key at all)
 * reads as `{ unreadable: why }` instead of failing the whole answer.
 */
export function readingOrMarking(codecs: readonly PayloadCodec[]): PayloadCodec {
  const marked = (why: string): Payload => ({ metadata: { encoding: encoder.encode('json/plain') }, data: encoder.encode(JSON.stringify({ unreadable: why } satisfies UnreadablePayload)) });
  return {
    encode: async (payloads) => {
      for (const codec of codecs) payloads = await codec.encode(payloads);
      return payloads;
    },
    decode: async (payloads) =>
      Promise.all(
        payloads.map(async (payload) => {
          let decoded = [payload];
          try {
            for (const codec of [...codecs].reverse()) decoded = await codec.decode(decoded);
          } catch (err) {
            return marked((err as Error).message);
          }
          const encoding = decoded[0].metadata?.encoding;
          if (encoding && decoder.decode(encoding) === ENCRYPTED_ENCODING) return marked('encrypted, and no key is configured (LONGHAUL_CODEC_KEYS / LONGHAUL_CODEC_KEY_FILE)');
          return decoded[0];
        }),
      ),
  };
}

/**
 * `encoded-failures` (the failure converter that puts messages and stack traces into an encrypted payload), as
 * a path the SDK requires: from sources (tsx, vitest) or compiled output (dist).
 */
export function encodedFailuresConverterPath(): string {
  const candidates = ['encoded-failures.js', 'encoded-failures.ts'].map((file) => join(__dirname, file));
  const found = candidates.find((path) => existsSync(path));
  if (!found) throw new Error(`encoded-failures module not found (looked for ${candidates.join(', ')})`);
  return found;
}

/**
 * The data converter for workers and clients: with keys configured, the encryption codec and failures whose
 * message and stack trace are encrypted too; else Temporal's default.
 */
export function longhaulDataConverter(env: NodeJS.ProcessEnv = process.env): DataConverter | undefined {
  const keys = codecKeysFromEnv(env);
  return keys.length > 0 ? { payloadCodecs: [new EncryptionCodec(keys)], failureConverterPath: encodedFailuresConverterPath() } : undefined;
}
