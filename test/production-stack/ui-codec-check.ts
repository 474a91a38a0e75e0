/**
 * `npx tsx --experimental-websocket test/production-stack/ui-codec-check.ts` — the Temporal Web UI (the one the
 * dev server embeds) shows an encrypted payload in clear through `longhaul codec-server` with a token, and not
 * without the right one. Needs Chromium (Debian: `apt-get install chromium`; `CHROMIUM` names another binary);
 * not part of `npm test`. Everything runs on 127.0.0.1.
 *
 * The UI sends `Authorization: Bearer <access token>` only with "pass access token" on and an https codec
 * endpoint. Its token comes from its OIDC login, or from the token provider a host page installs
 * (`globalThis.AccessToken`, which the UI asks first). The dev server's UI has no login (and clears a stored
 * login user at start), so the check installs the provider before the UI's scripts run, puts the codec settings
 * where the UI's Codec Server dialog does (localStorage `endpoint`, `passAccessToken`,
 * `overrideRemoteCodecConfiguration`), and opens the workflow's page in a fresh tab per token.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { EncryptionCodec, parseCodecKeys } from '../../src/temporal/codec';
import { startCodecServer } from '../../src/temporal/codec-server';
import { freePort, startDevServer } from '../../src/temporal/dev-server';

const log = (m: string) => console.error(`[ui-codec-check] ${m}`);

interface Cdp {
  send(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): void;
}

/** A Chrome DevTools Protocol session on one page target, over Node's WebSocket. */
async function cdpPage(port: number): Promise<Cdp> {
  const target = (await (await fetch(`http://127.0.0.1:${port}/json/new?about:blank`, { method: 'PUT' })).json()) as { webSocketDebuggerUrl: string };
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  let id = 0;
  const pending = new Map<number, { resolve(v: Record<string, unknown>): void; reject(e: Error): void }>();
  ws.onmessage = (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: Record<string, unknown>; error?: { message: string } };
    const waiter = message.id === undefined ? undefined : pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id!);
    if (message.error) waiter.reject(new Error(message.error.message));
    else waiter.resolve(message.result ?? {});
  };
  return {
    send: (method, params = {}) =>
      new Promise((resolve, reject) => {
        pending.set(++id, { resolve, reject });
        ws.send(JSON.stringify({ id, method, params }));
      }),
    close: () => ws.close(),
  };
}

async function pageText(page: Cdp): Promise<string> {
  const { result } = (await page.send('Runtime.evaluate', { expression: 'document.body ? document.body.innerText : ""', returnByValue: true })) as { result: { value: string } };
  return result.value;
}

/**
 * Opens `url` in a new tab whose access-token provider answers `accessToken`, with the UI's codec settings in
 * localStorage; the page's text once `marker` shows, or after `ms`.
 */
async function viewWithToken(debugPort: number, origin: string, url: string, settings: Record<string, unknown>, accessToken: string, marker: string, ms: number): Promise<string> {
  const page = await cdpPage(debugPort);
  try {
    await page.send('Page.enable');
    await page.send('Page.addScriptToEvaluateOnNewDocument', { source: `globalThis.AccessToken = async () => ${JSON.stringify(accessToken)};` });
    await page.send('Page.navigate', { url: `${origin}/namespaces/default/workflows` });
    await new Promise((r) => setTimeout(r, 3000));
    const writes = Object.entries(settings).map(([k, v]) => `localStorage.setItem(${JSON.stringify(k)}, ${JSON.stringify(JSON.stringify(v))});`).join('');
    await page.send('Runtime.evaluate', { expression: writes });
    await page.send('Page.navigate', { url });
    const until = Date.now() + ms;
    let text = '';
    while (Date.now() < until) {
      text = await pageText(page);
      if (text.includes(marker)) return text;
      await new Promise((r) => setTimeout(r, 1000));
    }
    return text;
  } finally {
    page.close();
  }
}

async function main(): Promise<void> {
  const chromium = process.env.CHROMIUM ?? 'chromium';
  const work = mkdtempSync(join(tmpdir(), 'ui-codec-check-'));
  const certs = join(work, 'tls');
  execFileSync('sh', [join(__dirname, '..', '..', 'scripts', 'make-certs.sh'), certs], { stdio: 'pipe' });
  const pem = (name: string) => readFileSync(join(certs, `${name}.pem`));
  const codec = new EncryptionCodec(parseCodecKeys(`ui:${randomBytes(32).toString('base64')}`, 'check'));
  const token = randomBytes(32).toString('base64');
  const uiPort = await freePort(32768);
  const uiOrigin = `http://127.0.0.1:${uiPort}`;
  const refusals: string[] = [];
  let decodes = 0;
  const counting = { encode: (p: Parameters<typeof codec.encode>[0]) => codec.encode(p), decode: (p: Parameters<typeof codec.decode>[0]) => ((decodes += 1), codec.decode(p)) };
  const codecServer = await startCodecServer({ codec: counting, port: 0, tokens: [token], corsOrigins: [uiOrigin], tls: { cert: pem('frontend'), key: pem('frontend-key') }, log: (l) => refusals.push(l) });
  log(`codec server ${codecServer.url} (https, token required, origin ${uiOrigin})`);
  const server = await startDevServer({ port: 0, uiPort, uiCodecEndpoint: codecServer.url, log });
  const spki = createHash('sha256').update(execFileSync('openssl', ['x509', '-in', join(certs, 'frontend.pem'), '-pubkey', '-noout']).toString().replace(/-----[^-]+-----|\s/g, ''), 'base64').digest('base64');
  const debugPort = await freePort();
  const browser = spawn(chromium, ['--headless=new', '--no-sandbox', '--disable-gpu', `--remote-debugging-port=${debugPort}`, `--user-data-dir=${join(work, 'profile')}`, `--ignore-certificate-errors-spki-list=${spki}`, 'about:blank'], { stdio: 'ignore' });
  let failed = false;
  try {
    const connection = await Connection.connect({ address: server.address });
    const client = new Client({ connection, namespace: server.namespace, dataConverter: { payloadCodecs: [codec] } });
    const marker = `ui-codec-check-${randomBytes(4).toString('hex')}`;
    // No worker: the start event's input is the payload the UI must decode.
    const handle = await client.workflow.start('uiCodecCheck', { taskQueue: `ui-check-${marker}`, workflowId: marker, args: [{ secretNote: `${marker}-decoded` }] });
    const url = `${uiOrigin}/namespaces/default/workflows/${marker}/${handle.firstExecutionRunId}/history`;
    for (let i = 0; i < 30; i++) {
      try {
        await fetch(`http://127.0.0.1:${debugPort}/json/version`);
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    const settings = { endpoint: codecServer.url, passAccessToken: true, overrideRemoteCodecConfiguration: true };
    const wrong = await viewWithToken(debugPort, uiOrigin, url, settings, randomBytes(32).toString('base64'), `${marker}-decoded`, 20_000);
    const wrongShown = wrong.includes(`${marker}-decoded`);
    log(`wrong token: decoded value shown: ${wrongShown}; codec server refusals: ${refusals.length} (${refusals.at(-1) ?? 'none'})`);
    const before = decodes;
    const right = await viewWithToken(debugPort, uiOrigin, url, settings, token, `${marker}-decoded`, 60_000);
    const rightShown = right.includes(`${marker}-decoded`);
    log(`right token: decoded value shown: ${rightShown}; decode calls answered: ${decodes - before}`);
    await connection.close();
    if (wrongShown || !rightShown || refusals.length === 0) {
      failed = true;
      log(`FAILED. Page text with the right token (first 1500 characters):\n${right.slice(0, 1500)}`);
    } else {
      const at = right.indexOf(`${marker}-decoded`);
      log(`OK: the UI shows the payload decoded through the codec server with the token, and not with a wrong one (401); the page shows: ${JSON.stringify(right.slice(Math.max(0, at - 40), at + marker.length + 20))}`);
    }
  } finally {
    browser.kill('SIGTERM');
    await codecServer.close();
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
  process.exitCode = failed ? 1 : 0;
}

main().catch((err: Error) => {
  log(`error: ${err.stack ?? err.message}`);
  process.exitCode = 1;
});
