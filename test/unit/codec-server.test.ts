/**
 * The codec server decrypts for whoever it answers, so it answers only a caller with a configured bearer token,
 * a Host it is configured for and (from a browser) a configured origin; and it will not start exposed.
 * Every request here goes to a server of the test's own on 127.0.0.1.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPayloadConverter } from '@temporalio/common';
import { codecServerSettings, ConfigError } from '../../src/config';
import { EncryptionCodec, parseCodecKeys } from '../../src/temporal/codec';
import { CodecServerConfigError, hostNameOf, startCodecServer, type RunningCodecServer } from '../../src/temporal/codec-server';

const codec = new EncryptionCodec(parseCodecKeys(`t:${randomBytes(32).toString('base64')}`, 'test'));
const token = randomBytes(32).toString('base64');
const UI = 'http://localhost:8233';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request with exactly these headers (fetch cannot set `Host`). */
function call(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function sealedBody(value: unknown): Promise<string> {
  const [sealed] = await codec.encode([defaultPayloadConverter.toPayload(value)]);
  const metadata = Object.fromEntries(Object.entries(sealed.metadata!).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
  return JSON.stringify({ payloads: [{ metadata, data: Buffer.from(sealed.data!).toString('base64') }] });
}

function decodedValue(answer: Answer): unknown {
  const [p] = (JSON.parse(answer.body) as { payloads: { metadata: Record<string, string>; data: string }[] }).payloads;
  return defaultPayloadConverter.fromPayload({
    metadata: Object.fromEntries(Object.entries(p.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
    data: Buffer.from(p.data, 'base64'),
  });
}

describe('codec server authentication', () => {
  let server: RunningCodecServer;
  const refusals: string[] = [];
  let decode: string;
  let body: string;
  const json = { 'content-type': 'application/json' };

  beforeAll(async () => {
    server = await startCodecServer({ codec, port: 0, tokens: [`${'x'.repeat(32)}-retired`, token], hostNames: ['codec.internal.example'], log: (l) => refusals.push(l) });
    decode = `${server.url}/decode`;
    body = await sealedBody({ author: 'Mona <mona@example.com>' });
  });
  afterAll(async () => server?.close());

  it('answers 401 with a Bearer challenge when a request carries no credentials, and decodes nothing', async () => {
    const answer = await call(decode, 'POST', json, body);
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toBe('Bearer realm="longhaul-codec"');
    expect(answer.body).not.toContain('mona');
    const basic = await call(decode, 'POST', { ...json, authorization: `Basic ${Buffer.from(`u:${token}`).toString('base64')}` }, body);
    expect(basic.status).toBe(401);
  });

  it('answers 401 (invalid_token) to a wrong token, one character off included, and logs the refusal without it', async () => {
    const wrong = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
    for (const presented of [wrong, 'short', `${token}x`]) {
      const answer = await call(decode, 'POST', { ...json, authorization: `Bearer ${presented}` }, body);
      expect(answer.status).toBe(401);
      expect(answer.headers['www-authenticate']).toMatch(/error="invalid_token"/);
      expect(answer.body).not.toContain('mona');
    }
    expect(refusals.some((l) => /refused POST \/decode from 127\.0\.0\.1: the token is not valid/.test(l))).toBe(true);
    expect(refusals.join('\n')).not.toContain(token.slice(0, 12));
  });

  it('decodes with the right token, and with any configured token (rotation)', async () => {
    const answer = await call(decode, 'POST', { ...json, authorization: `Bearer ${token}` }, body);
    expect(answer.status).toBe(200);
    expect(decodedValue(answer)).toEqual({ author: 'Mona <mona@example.com>' });
    const retired = await call(decode, 'POST', { ...json, authorization: `bearer ${'x'.repeat(32)}-retired` }, body);
    expect(retired.status).toBe(200);
  });

  it("answers a browser only from a configured origin: 403 and no CORS headers for another, the UI's allowed", async () => {
    const preflight = { 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type,x-namespace' };
    const other = await call(decode, 'OPTIONS', { origin: 'http://evil.example', ...preflight });
    expect(other.status).toBe(403);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    expect(other.headers['access-control-allow-headers']).toBeUndefined();
    // Even with the token (a page that stole it still cannot read the answer from its origin).
    const otherPost = await call(decode, 'POST', { ...json, origin: 'http://evil.example', authorization: `Bearer ${token}` }, body);
    expect(otherPost.status).toBe(403);
    expect(otherPost.headers['access-control-allow-origin']).toBeUndefined();
    expect(otherPost.body).not.toContain('mona');

    const ui = await call(decode, 'OPTIONS', { origin: UI, ...preflight });
    expect(ui.status).toBe(204);
    expect(ui.headers['access-control-allow-origin']).toBe(UI);
    expect(ui.headers['access-control-allow-headers']).toMatch(/authorization/);
    const uiPost = await call(decode, 'POST', { ...json, origin: UI, 'x-namespace': 'default', authorization: `Bearer ${token}` }, body);
    expect(uiPost.status).toBe(200);
    expect(uiPost.headers['access-control-allow-origin']).toBe(UI);
    // A 401 to the UI carries its CORS headers, so the UI sees the status instead of a network error.
    const uiNoToken = await call(decode, 'POST', { ...json, origin: UI }, body);
    expect(uiNoToken.status).toBe(401);
    expect(uiNoToken.headers['access-control-allow-origin']).toBe(UI);
  });

  it('refuses a Host it is not configured for (DNS rebinding), even with the token, and answers a configured one', async () => {
    const port = new URL(server.url).port;
    for (const host of [`attacker.example:${port}`, 'attacker.example', `127.0.0.1.nip.io:${port}`]) {
      const answer = await call(decode, 'POST', { ...json, host, authorization: `Bearer ${token}` }, body);
      expect(answer.status, host).toBe(421);
      expect(answer.body).not.toContain('mona');
    }
    for (const host of [`codec.internal.example:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
      const answer = await call(decode, 'POST', { ...json, host, authorization: `Bearer ${token}` }, body);
      expect(answer.status, host).toBe(200);
    }
  });

  it('reads the host name of a Host header the way a browser writes it', () => {
    expect(hostNameOf('LocalHost:8234')).toBe('localhost');
    expect(hostNameOf('[::1]:8234')).toBe('::1');
    expect(hostNameOf('a.example')).toBe('a.example');
    expect(hostNameOf('a.example:80:81')).toBeUndefined();
    expect(hostNameOf('user@a.example')).toBeUndefined();
    expect(hostNameOf(undefined)).toBeUndefined();
  });
});

describe('codec server start', () => {
  it('refuses to start without a token, before it listens', async () => {
    await expect(startCodecServer({ codec, port: 0, tokens: [] })).rejects.toThrow(CodecServerConfigError);
    await expect(startCodecServer({ codec, port: 0, tokens: [] })).rejects.toThrow(/needs a token .*LONGHAUL_CODEC_SERVER_TOKEN/);
  });

  it('runs without a token only on loopback and only when asked to', async () => {
    // Refused before binding: nothing listens on every interface, not even for a moment.
    await expect(startCodecServer({ codec, port: 0, host: '0.0.0.0', tokens: [], allowUnauthenticatedLoopback: true })).rejects.toThrow(/only on loopback, not on 0\.0\.0\.0/);
    const open = await startCodecServer({ codec, port: 0, tokens: [], allowUnauthenticatedLoopback: true });
    try {
      const answer = await call(`${open.url}/decode`, 'POST', { 'content-type': 'application/json' }, await sealedBody('clear'));
      expect(answer.status).toBe(200);
      expect(decodedValue(answer)).toBe('clear');
      const rebound = await call(`${open.url}/decode`, 'POST', { 'content-type': 'application/json', host: 'attacker.example' }, await sealedBody('clear'));
      expect(rebound.status).toBe(421);
    } finally {
      await open.close();
    }
  });

  it('refuses a token too short to stand between the network and the keys', async () => {
    await expect(startCodecServer({ codec, port: 0, tokens: ['secret'] })).rejects.toThrow(/at least 24 characters/);
  });

  it('reads its settings from LONGHAUL_CODEC_SERVER_* (token from a file, origins, hosts) and refuses malformed ones', () => {
    const dir = mkdtempSync(join(tmpdir(), 'codec-token-'));
    const file = join(dir, 'token');
    writeFileSync(file, `${token}\nnext-${token}\n`);
    const settings = codecServerSettings({
      LONGHAUL_CODEC_SERVER_TOKEN_FILE: file,
      LONGHAUL_CODEC_SERVER_CORS_ORIGINS: 'https://temporal.example.com, http://localhost:8233',
      LONGHAUL_CODEC_SERVER_HOSTS: 'codec.example.com',
    });
    expect(settings).toMatchObject({ tokens: [token, `next-${token}`], authOff: false, corsOrigins: ['https://temporal.example.com', UI], hostNames: ['codec.example.com'] });
    expect(codecServerSettings({}).corsOrigins).toBeUndefined();
    expect(() => codecServerSettings({ LONGHAUL_CODEC_SERVER_CORS_ORIGINS: 'https://ui.example/path' })).toThrow(ConfigError);
    expect(() => codecServerSettings({ LONGHAUL_CODEC_SERVER_CORS_ORIGINS: '*' })).toThrow(/not an origin/);
    expect(() => codecServerSettings({ LONGHAUL_CODEC_SERVER_AUTH: 'off', LONGHAUL_CODEC_SERVER_TOKEN: token })).toThrow(/choose one/);
    expect(() => codecServerSettings({ LONGHAUL_CODEC_SERVER_TOKEN_FILE: join(dir, 'missing') })).toThrow(/cannot read/);
    expect(() => codecServerSettings({ LONGHAUL_CODEC_SERVER_TLS_CERT_FILE: file })).toThrow(/go together/);
  });
});

describe('longhaul codec-server', () => {
  const bin = join(__dirname, '..', '..', 'bin', 'longhaul.js');
  const keys = `cli:${randomBytes(32).toString('base64')}`;
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('LONGHAUL_CODEC')));
  const run = (args: string[], env: Record<string, string>) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(process.execPath, [bin, 'codec-server', ...args], { env: { ...clean, LONGHAUL_CODEC_KEYS: keys, ...env } }, (err, _stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stderr }));
    });

  it('refuses to start without a token (exit code 2), and open on an address that is not loopback', async () => {
    const none = await run(['--port', '0'], {});
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/needs a token \(LONGHAUL_CODEC_SERVER_TOKEN/);
    const exposed = await run(['--port', '0', '--host', '0.0.0.0'], { LONGHAUL_CODEC_SERVER_AUTH: 'off' });
    expect(exposed.code).toBe(2);
    expect(exposed.stderr).toMatch(/only on loopback, not on 0\.0\.0\.0/);
  });

  it('serves with the token of LONGHAUL_CODEC_SERVER_TOKEN_FILE and answers 401 without it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'codec-cli-'));
    writeFileSync(join(dir, 'token'), token);
    const child = spawn(process.execPath, [bin, 'codec-server', '--port', '0'], { env: { ...clean, LONGHAUL_CODEC_KEYS: keys, LONGHAUL_CODEC_SERVER_TOKEN_FILE: join(dir, 'token') }, stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let text = '';
        child.stderr!.on('data', (d: Buffer) => {
          text += d.toString();
          const found = /codec server on (http:\/\/127\.0\.0\.1:\d+)/.exec(text);
          if (found) resolve(found[1]);
        });
        child.on('exit', (code) => reject(new Error(`codec-server exited ${code}: ${text}`)));
      });
      expect((await call(`${url}/decode`, 'POST', { 'content-type': 'application/json' }, '{"payloads":[]}')).status).toBe(401);
      const ok = await call(`${url}/decode`, 'POST', { 'content-type': 'application/json', authorization: `Bearer ${token}` }, '{"payloads":[]}');
      expect(ok.status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
  });
});
