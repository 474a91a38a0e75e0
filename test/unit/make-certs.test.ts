/**
 * scripts/make-certs.sh makes what mutual TLS needs: a server holding the frontend certificate and requiring
 * client certificates from the CA accepts the script's client certificate and refuses a connection without one.
 * The same certificate serves the codec server over https. Every connection here is to 127.0.0.1.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer, type TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPayloadConverter } from '@temporalio/common';
import { EncryptionCodec, parseCodecKeys } from '../../src/temporal/codec';
import { startCodecServer } from '../../src/temporal/codec-server';

const script = join(__dirname, '..', '..', 'scripts', 'make-certs.sh');

describe('scripts/make-certs.sh', () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'make-certs-')), 'tls');
  const pem = (name: string) => readFileSync(join(dir, `${name}.pem`));
  let server: ReturnType<typeof createServer>;
  let port: number;

  beforeAll(async () => {
    execFileSync('sh', [script, dir, 'temporal.internal.example'], { stdio: 'pipe' });
    server = createServer({ cert: pem('frontend'), key: pem('frontend-key'), ca: pem('ca'), requestCert: true, rejectUnauthorized: true }, (socket) => socket.end('hello'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  const handshake = (options: { cert?: Buffer; key?: Buffer; servername: string }) =>
    new Promise<{ authorized: boolean; data: string }>((resolve, reject) => {
      const socket: TLSSocket = connect({ host: '127.0.0.1', port, ca: pem('ca'), ...options }, () => {
        let data = '';
        socket.on('data', (d: Buffer) => (data += d.toString()));
        socket.on('end', () => resolve({ authorized: socket.authorized, data }));
      });
      socket.on('error', reject);
    });

  it('makes a frontend certificate the client verifies for temporal, localhost and the names given, and accepts its client certificate', async () => {
    for (const servername of ['temporal', 'localhost', 'temporal.internal.example']) {
      expect(await handshake({ cert: pem('client'), key: pem('client-key'), servername })).toEqual({ authorized: true, data: 'hello' });
    }
    await expect(handshake({ cert: pem('client'), key: pem('client-key'), servername: 'other.example' })).rejects.toThrow(/altnames|Hostname/i);
  });

  it('is refused by the mTLS server without a client certificate', async () => {
    await expect(handshake({ servername: 'temporal' })).rejects.toThrow(/certificate|alert|socket hang up|ECONNRESET/i);
  });

  it('keeps private keys readable by their owner only, and keeps existing certificates on a second run', () => {
    for (const key of ['ca-key', 'frontend-key', 'client-key']) expect(statSync(join(dir, `${key}.pem`)).mode & 0o077).toBe(0);
    const before = pem('ca');
    execFileSync('sh', [script, dir], { stdio: 'pipe' });
    expect(pem('ca').equals(before)).toBe(true);
  });

  it("serves the codec server over https with the frontend certificate, and it still wants its token", async () => {
    const codec = new EncryptionCodec(parseCodecKeys(`t:${randomBytes(32).toString('base64')}`, 'test'));
    const token = randomBytes(32).toString('base64');
    const https = await startCodecServer({ codec, port: 0, tokens: [token], tls: { cert: pem('frontend'), key: pem('frontend-key') } });
    try {
      expect(https.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const [sealed] = await codec.encode([defaultPayloadConverter.toPayload('over tls')]);
      const body = JSON.stringify({ payloads: [{ metadata: Object.fromEntries(Object.entries(sealed.metadata!).map(([k, v]) => [k, Buffer.from(v).toString('base64')])), data: Buffer.from(sealed.data!).toString('base64') }] });
      const post = (auth?: string) =>
        new Promise<{ status: number; text: string }>((resolve, reject) => {
          const req = request(`${https.url}/decode`, { method: 'POST', ca: pem('ca'), headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) } }, (res) => {
            let text = '';
            res.on('data', (c: Buffer) => (text += c.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
          });
          req.on('error', reject);
          req.end(body);
        });
      expect((await post()).status).toBe(401);
      const ok = await post(`Bearer ${token}`);
      expect(ok.status).toBe(200);
      const [p] = (JSON.parse(ok.text) as { payloads: { metadata: Record<string, string>; data: string }[] }).payloads;
      expect(Buffer.from(p.data, 'base64').toString()).toBe('"over tls"');
    } finally {
      await https.close();
    }
  });
});
