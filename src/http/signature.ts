/**
 * The webhook signature scheme of spec 001: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw
 * body with the shared secret>`. Used by the HTTP feed sink to sign what it sends, by the local receiver
 * to verify it, and by the emulator to record the header on webhook deliveries.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-hub-signature-256';

/** `sha256=<hex>` for `body` under `secret`. */
export function signBody(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Whether `header` is the signature of `body` under `secret` (constant-time comparison). */
export function verifySignature(secret: string, body: string | Buffer, header: string | undefined): boolean {
  if (!header || !/^sha256=[0-9a-f]{64}$/i.test(header.trim())) return false;
  const expected = Buffer.from(signBody(secret, body));
  const given = Buffer.from(header.trim().toLowerCase());
  return expected.length === given.length && timingSafeEqual(expected, given);
}
