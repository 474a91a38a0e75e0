/**
 * Webhook payload signatures as spec 001 describes them ("Delivery fields"; GitHub's "Validating webhook
 * deliveries"): the raw body's HMAC under the hook's configured secret, hex-encoded, in `X-Hub-Signature-256`
 * (`sha256=<hex>`) and in the older `X-Hub-Signature` (`sha1=<hex>`).
 *
 * Written here from the description, not borrowed from longhaul's own signer (`src/http/signature.ts`): the
 * emulator's receiver checks what longhaul's HTTP sink signs, and a check that shared the signer's code would
 * agree with any bug in it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header a receiver reads (Node lower-cases incoming header names). */
export const SHA256_HEADER = 'x-hub-signature-256';

/** `sha256=<hex>` or `sha1=<hex>`: the HMAC of `body` under `secret`. */
export function hubSignature(algorithm: 'sha256' | 'sha1', secret: string, body: string | Buffer): string {
  return `${algorithm}=${createHmac(algorithm, secret).update(body).digest('hex')}`;
}

/** Whether `header` is `sha256=` and the HMAC-SHA256 of `body` under `secret` (compared in constant time). */
export function matchesSha256(secret: string, body: string | Buffer, header: string | undefined): boolean {
  const match = /^sha256=([0-9a-f]{64})$/i.exec(header?.trim() ?? '');
  if (!match) return false;
  const expected = createHmac('sha256', secret).update(body).digest();
  return timingSafeEqual(expected, Buffer.from(match[1], 'hex'));
}
