/**
 * Behind a corporate proxy (issue 41): what runs through a real forward proxy (`forward-proxy.ts`: the `proxy`
 * package in a process of its own, its outgoing connections leaving from 127.0.0.2) to origins behind gates that
 * accept connections from 127.0.0.2 only (any other is closed unanswered and counted). The migration into S3 with
 * TLS-inspected origins and a SIGKILL: `proxy-migration.test.ts`.
 *
 * - An API-key deletion (Google) and a feed poll into an HTTP sink from a worker process, over http, the
 *   credentials in `HTTP_PROXY`; `longhaul doctor --reach` with the same settings.
 * - Uploads into GCS (fake-gcs-server) and Azure (Azurite) from a process given only the standard variables: their
 *   SDKs read the proxy from the environment the worker's start-up normalised.
 * - The archive transport in-process: http through the proxy as an absolute-form request, `NO_PROXY` sending a
 *   host direct (so the gate refuses it), and the outbound policy refusing a metadata address before the proxy is
 *   asked anything.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DoctorReport } from '../../src/cli/doctor';
import { startSinkReceiver } from '../../packages/emulator/src/sink/receiver';
import { readHead } from '../../src/archive/storage/transport';
import { FailureType } from '../../src/http/retry-policy';
import { StorageClient } from '../../src/archive/storage/client';
import { startFakeGcs } from '../servers/object-stores';
import { feedCursorWorkflowId } from '../../src/processes/feed-poll/model';
import { feedPollRun } from '../../src/processes/feed-poll/workflow';
import { apiKeyDelete } from '../../src/processes/google-operation/apikey-delete';
import { TEST_TOKEN } from '../helpers/emulator';
import { useFleetTeardown } from '../helpers/fleet';
import { laterPort, NO_INHERITED_PROXY, PROXY_PASSWORD, PROXY_USER, startForwardProxy, withCredentials } from '../helpers/forward-proxy';
import { expectOnlyThroughProxy, gateClosedLater } from '../helpers/forward-proxy-checks';
import { githubHostEnv } from '../helpers/multi-host';
import { archiveSha256, createBucket, envThrough, readBack, startArchiveServer, STARTERS } from '../helpers/object-stores';
import { FAST_POLL_5_MIN } from '../helpers/presets';
import { runLonghaul } from '../helpers/starter';
import { compiled } from '../helpers/compiled-entry';
import { startWorkerProcess } from '../helpers/worker-process';

const fleet = useFleetTeardown();

const MiB = 1024 * 1024;
const PART = 5 * MiB;
const BUCKET = 'proxied-archives';

describe('behind a forward proxy, direct connections refused', () => {
  it('runs an API-key deletion and a feed poll into an HTTP sink through the proxy', async () => {
    const proxy = await startForwardProxy({ credentials: `${PROXY_USER}:${PROXY_PASSWORD}` });
    fleet.closeLater(() => proxy.close());
    const secret = `sink-${randomUUID()}`;
    const receiver = await startSinkReceiver({ secret });
    fleet.closeLater(() => receiver.close());
    const api = laterPort();
    const apikeys = laterPort();
    const gates = { api: await gateClosedLater(fleet, api.get), apikeys: await gateClosedLater(fleet, apikeys.get), sink: await gateClosedLater(fleet, () => Number(new URL(receiver.url).port)) };
    const e = await fleet.emulator({ feeds: { eventsPerMinute: 0, initialEvents: 0, pollIntervalSeconds: 1 }, google: { apikeys: { deleteOperationMs: 500 } }, apiPublicUrl: gates.api.url });
    api.set(e.apiUrl);
    apikeys.set(e.serviceUrl('google-apikeys'));

    const taskQueue = `proxy-google-feed-${randomUUID()}`;
    const worker = await startWorkerProcess({
      ...NO_INHERITED_PROXY,
      ...githubHostEnv(gates.api.url, 'proxy-feed'),
      HTTP_PROXY: withCredentials(proxy),
      GOOGLE_APIKEYS_URL: gates.apikeys.url,
      GOOGLE_ACCESS_TOKEN: TEST_TOKEN,
      LONGHAUL_GOOGLE_CREDENTIAL: `google-${randomUUID().slice(0, 8)}`,
      LONGHAUL_SINK_SECRETS: 'proxied',
      LONGHAUL_SINK_PROXIED_SECRET: secret,
      LONGHAUL_TASK_QUEUE: taskQueue,
      LONGHAUL_DATA_DIR: join(tmpdir(), `longhaul-proxy-${randomUUID().slice(0, 8)}`),
    });
    expect(worker.output()).toContain(`outbound: https via http://***@${new URL(proxy.url).host}, http via http://***@${new URL(proxy.url).host}`);
    const client = await fleet.client();

    const name = 'projects/demo-project/locations/global/keys/demo-key-1';
    const deletion = fleet.track(await client.workflow.start(apiKeyDelete, { taskQueue, workflowId: `proxy-apikey-${randomUUID()}`, args: [{ name, poll: FAST_POLL_5_MIN }] }));
    const feed = '/repos/octo-org/alpha/events';
    e.feeds.ensure(feed);
    e.feeds.burst(feed, 150);
    fleet.track(client.workflow.getHandle(feedCursorWorkflowId(feed)));
    const poll = fleet.track(
      await client.workflow.start(feedPollRun, {
        taskQueue,
        workflowId: `proxy-feed-${randomUUID()}`,
        args: [{ feed, sink: { kind: 'http', url: `${gates.sink.url}/events`, secret: 'proxied' }, origin: 'manual' }],
      }),
    );
    await deletion.result();
    const outcome = await poll.result();
    expect(outcome).toMatchObject({ kind: 'delivered', delivered: 150, pages: 2 });
    expect(receiver.eventIds(feed)).toEqual(e.feeds.produced(feed).map((ev) => String(ev.id)));

    // `longhaul doctor --reach` with the worker's settings: each destination, the proxy in effect, its answer.
    const proxied = withCredentials(proxy);
    const googleUrls = { GOOGLE_APIKEYS_URL: gates.apikeys.url, GOOGLE_LOGGING_URL: gates.apikeys.url, GOOGLE_DNS_URL: gates.apikeys.url };
    const doctor = await runLonghaul(['doctor', '--json', '--reach'], taskQueue, { ...NO_INHERITED_PROXY, HTTP_PROXY: proxied, GITHUB_API_URL: gates.api.url, GITHUB_TOKEN: TEST_TOKEN, ...googleUrls });
    const shown = `http://***@${new URL(proxy.url).host}`;
    expect((JSON.parse(doctor.stdout) as DoctorReport).outbound?.destinations).toEqual([
      { name: 'github github', url: gates.api.url, via: shown, reachable: true, answer: expect.stringMatching(/^HTTP \d{3}$/) as unknown },
      ...['apikeys', 'logging', 'dns'].map((api) => ({ name: `google-${api}`, url: gates.apikeys.url, via: shown, reachable: true, answer: expect.stringMatching(/^HTTP \d{3}$/) as unknown })),
    ]);
    expect(doctor.stdout + doctor.stderr).not.toContain(PROXY_PASSWORD);

    expectOnlyThroughProxy(gates, proxy.targets());
    expect(proxy.events().filter((ev) => ev.kind === 'refused')).toEqual([]);
    expect(worker.output()).not.toContain(PROXY_PASSWORD);
    console.info(`[proxy google+feed] ${proxy.events().length} proxy connections (api ${gates.api.accepted()}, apikeys ${gates.apikeys.accepted()}, sink ${gates.sink.accepted()}); direct connections refused: 0`);
  }, 180_000);

  it.each(['gs', 'azblob'] as const)('uploads an archive into %s through the proxy its SDK reads from the environment', async (kind) => {
    const proxy = await startForwardProxy({ credentials: `${PROXY_USER}:${PROXY_PASSWORD}` });
    fleet.closeLater(() => proxy.close());
    const port = laterPort();
    const front = await gateClosedLater(fleet, port.get);
    // fake-gcs-server's resumable session URIs name the gate, so the chunks go through the proxy too.
    const server = kind === 'gs' ? await startFakeGcs({ publicPort: Number(new URL(front.url).port) }) : await STARTERS[kind]();
    fleet.closeLater(() => server.stop());
    port.set(server.endpoint);
    const direct = envThrough(kind, server, server.endpoint);
    await createBucket(kind, direct, BUCKET);
    const size = 2 * PART + 4321;
    const source = await startArchiveServer(size);
    fleet.closeLater(source.close);
    const proxied = withCredentials(proxy);
    const input = { destination: `${kind}://${BUCKET}/proxied/`, name: 'through.tar.gz', size, sourceUrl: source.url, partBytes: PART, partsInFlight: 2, env: envThrough(kind, server, front.url) };
    const child = spawn(process.execPath, [compiled(join(__dirname, '..', 'helpers', 'upload-child.ts')), JSON.stringify(input)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...NO_INHERITED_PROXY, HTTPS_PROXY: proxied, HTTP_PROXY: proxied },
    });
    let output = '';
    for (const stream of [child.stdout, child.stderr]) stream.on('data', (d: Buffer) => (output += d.toString()));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code, output).toBe(0);
    const expected = archiveSha256(size);
    expect(await readBack(kind, direct, BUCKET, 'proxied/through.tar.gz')).toEqual({ bytes: size, sha256: expected, metadataSha256: expected });
    expectOnlyThroughProxy({ [kind]: front }, proxy.targets());
    expect(proxy.events().filter((ev) => ev.kind === 'refused')).toEqual([]);
    expect(output).not.toContain(PROXY_PASSWORD);
  }, 120_000);

  it('sends the archive transport through the proxy (absolute-form http), direct for NO_PROXY, and refuses a metadata address before asking the proxy', async () => {
    const proxy = await startForwardProxy();
    fleet.closeLater(() => proxy.close());
    const e = await fleet.emulator();
    const origin = await gateClosedLater(fleet, () => Number(new URL(e.storage.baseUrl).port));
    const settings = { httpProxy: new URL(proxy.url), httpsProxy: new URL(proxy.url), noProxy: '' };
    const outbound = () => ({ api: { protocol: 'http:', addresses: ['127.0.0.1'] }, allowedHosts: [] });
    const storage = (noProxy = '') => new StorageClient({ api: 'storage', route: '/archive', outbound, network: { ...settings, noProxy } });

    // An unsigned link: the storage origin's refusal (403) is an answer that came through the proxy.
    const res = await storage().get(new URL(`${origin.url}/no-such-archive`));
    expect(res.statusCode).toBe(403);
    await readHead(res.body);
    expect(proxy.events()).toEqual([{ kind: 'request', target: `${origin.url}/no-such-archive` }]);
    expect(origin.refused()).toBe(0);

    // NO_PROXY names the origin: the transport goes direct, and the gate closes the connection.
    await expect(storage(origin.host).get(new URL(`${origin.url}/direct`))).rejects.toThrow();
    expect(origin.refused()).toBe(1);

    // The policy is applied before the proxy is asked: a link-local address is refused, and the proxy sees nothing.
    await expect(storage().get(new URL('http://169.254.169.254/latest/meta-data/'))).rejects.toMatchObject({ type: FailureType.OutboundRefused });
    expect(proxy.events()).toHaveLength(1);
  }, 60_000);
});
