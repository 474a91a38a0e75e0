/**
 * The outbound policy (issue 35) as a table: where the worker may connect for an address it did not configure.
 * Every private, link-local or public address here is only judged, never connected to: names resolve through a
 * fake resolver, and the only sockets opened go to the test's own loopback listener.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import {
  addressClass,
  checkedAddresses,
  decideOutbound,
  guardedAgent,
  OutboundRefused,
  outboundContext,
  type OutboundContext,
  type OutboundRule,
  type Resolver,
} from '../../src/http/outbound-policy';
import { allowedHosts, ConfigError } from '../../src/config';
import { FailureType } from '../../src/http/retry-policy';
import { TokenlessClient } from '../../src/http/tokenless';
import { StorageClient } from '../../src/archive/storage/client';
import { failureOf } from '../helpers/failures';

/** github.com's API, as a public HTTPS origin (only judged: nothing here resolves or connects to it). */
const PUBLIC_API: OutboundContext = { api: { protocol: 'https:', addresses: ['140.82.112.6'] }, allowedHosts: [] };
/** GHES inside a company network. */
const PRIVATE_API: OutboundContext = { api: { protocol: 'https:', addresses: ['10.1.2.3'] }, allowedHosts: [] };
/** The emulator. */
const LOOPBACK_API: OutboundContext = { api: { protocol: 'http:', addresses: ['127.0.0.1'] }, allowedHosts: [] };
/** Nothing known about the API (a sink without one, a host that did not resolve). */
const NO_API: OutboundContext = { allowedHosts: [] };

/** What `new URL` makes of a host (WHATWG normalises odd IPv4 spellings before the policy sees them). */
const hostOf = (url: string) => new URL(url).hostname;

describe('decideOutbound', () => {
  const table: [string, string, OutboundContext, OutboundRule | 'allowed'][] = [
    // the scheme
    ['https to a public address', 'https://140.82.114.4/x', PUBLIC_API, 'allowed'],
    ['http to a public address from a public API', 'http://140.82.114.4/x', PUBLIC_API, 'scheme'],
    ['http from a private http API (not loopback)', 'http://10.0.0.9/x', { api: { protocol: 'http:', addresses: ['10.1.2.3'] }, allowedHosts: [] }, 'scheme'],
    ['http on loopback when the API is http on loopback (the emulator)', 'http://127.0.0.1:9/x', LOOPBACK_API, 'allowed'],
    ['http without any API', 'http://203.0.113.7/x', NO_API, 'scheme'],
    ['ftp', 'ftp://140.82.114.4/x', LOOPBACK_API, 'scheme'],
    ['a name before it is resolved', 'https://storage.example.com/x', PUBLIC_API, 'allowed'],
    // never, whatever the API
    ['0.0.0.0', 'http://0.0.0.0:8080/x', LOOPBACK_API, 'unspecified'],
    ['0 (WHATWG: 0.0.0.0)', 'http://0:8080/x', LOOPBACK_API, 'unspecified'],
    ['[::]', 'http://[::]:8080/x', LOOPBACK_API, 'unspecified'],
    ['[::ffff:0.0.0.0]', 'https://[::ffff:0.0.0.0]/x', PRIVATE_API, 'unspecified'],
    ['169.254.169.254 (cloud metadata)', 'https://169.254.169.254/latest/meta-data/', PRIVATE_API, 'link-local'],
    ['169.254.169.254 from the emulator', 'http://169.254.169.254/x', LOOPBACK_API, 'link-local'],
    ['2852039166 (decimal 169.254.169.254)', 'https://2852039166/x', PUBLIC_API, 'link-local'],
    ['0xa9.0xfe.0xa9.0xfe (hex)', 'https://0xa9.0xfe.0xa9.0xfe/x', PUBLIC_API, 'link-local'],
    ['0251.0376.0251.0376 (octal)', 'https://0251.0376.0251.0376/x', PUBLIC_API, 'link-local'],
    ['[::ffff:169.254.169.254] (IPv4-mapped)', 'https://[::ffff:169.254.169.254]/x', PRIVATE_API, 'link-local'],
    ['[64:ff9b::a9fe:a9fe] (NAT64 image)', 'https://[64:ff9b::a9fe:a9fe]/x', PRIVATE_API, 'link-local'],
    ['[fe80::1]', 'https://[fe80::1]/x', PRIVATE_API, 'link-local'],
    ['224.0.0.1', 'https://224.0.0.1/x', PRIVATE_API, 'multicast'],
    ['[ff02::1]', 'https://[ff02::1]/x', PRIVATE_API, 'multicast'],
    ['255.255.255.255', 'https://255.255.255.255/x', PRIVATE_API, 'broadcast'],
    ['240.0.0.1', 'https://240.0.0.1/x', PRIVATE_API, 'reserved'],
    ['[2002:a9fe:a9fe::1] (6to4)', 'https://[2002:a9fe:a9fe::1]/x', PUBLIC_API, 'reserved'],
    ['[::a9fe:a9fe] (IPv4-compatible)', 'https://[::a9fe:a9fe]/x', PUBLIC_API, 'reserved'],
    // loopback and private: only from an internal API
    ['127.0.0.1 from a public API', 'https://127.0.0.1/x', PUBLIC_API, 'loopback'],
    ['0x7f.1 (WHATWG: 127.0.0.1) from a public API', 'https://0x7f.1/x', PUBLIC_API, 'loopback'],
    ['2130706433 (decimal 127.0.0.1) from a public API', 'https://2130706433/x', PUBLIC_API, 'loopback'],
    ['127.1.2.3 from a public API', 'https://127.1.2.3/x', PUBLIC_API, 'loopback'],
    ['[::1] from a public API', 'https://[::1]/x', PUBLIC_API, 'loopback'],
    ['[::ffff:127.0.0.1] from a public API', 'https://[::ffff:127.0.0.1]/x', PUBLIC_API, 'loopback'],
    ['10.0.0.1 from a public API', 'https://10.0.0.1/x', PUBLIC_API, 'private'],
    ['172.16.5.4 from a public API', 'https://172.16.5.4/x', PUBLIC_API, 'private'],
    ['172.32.0.1 is public', 'https://172.32.0.1/x', PUBLIC_API, 'allowed'],
    ['192.168.1.1 from a public API', 'https://192.168.1.1/x', PUBLIC_API, 'private'],
    ['100.64.0.1 (CGNAT) from a public API', 'https://100.64.0.1/x', PUBLIC_API, 'private'],
    ['[fd00::1] from a public API', 'https://[fd00::1]/x', PUBLIC_API, 'private'],
    ['10.0.0.1 without any API', 'https://10.0.0.1/x', NO_API, 'private'],
    ['10.0.0.1 from a private API (GHES)', 'https://10.0.0.1/x', PRIVATE_API, 'allowed'],
    ['127.0.0.1 from a private API', 'https://127.0.0.1/x', PRIVATE_API, 'allowed'],
    ['[fd00::1] from the emulator', 'http://[fd00::1]:9/x', LOOPBACK_API, 'allowed'],
    ['10.0.0.1 listed in LONGHAUL_ALLOWED_HOSTS', 'https://10.0.0.1/x', { ...PUBLIC_API, allowedHosts: ['10.0.0.1'] }, 'allowed'],
    ['[fd00::1] listed with brackets', 'https://[fd00::1]/x', { ...PUBLIC_API, allowedHosts: ['[fd00::1]'] }, 'allowed'],
    ['169.254.169.254 listed all the same', 'https://169.254.169.254/x', { ...PUBLIC_API, allowedHosts: ['169.254.169.254'] }, 'link-local'],
    ['10.0.0.2 when only 10.0.0.1 is listed', 'https://10.0.0.2/x', { ...PUBLIC_API, allowedHosts: ['10.0.0.1'] }, 'private'],
  ];
  it.each(table)('%s (%s)', (_name, url, ctx, expected) => {
    const parsed = new URL(url);
    const decision = decideOutbound({ protocol: parsed.protocol, host: parsed.hostname }, ctx);
    expect(decision.allowed ? 'allowed' : decision.rule).toBe(expected);
  });

  it('judges a name by each address it resolved to, and a listed name lifts only the loopback/private rule', () => {
    const at = (address: string, ctx: OutboundContext = PUBLIC_API) => {
      const d = decideOutbound({ host: 'storage.corp.example', address }, ctx);
      return d.allowed ? 'allowed' : d.rule;
    };
    expect(at('52.216.1.1')).toBe('allowed');
    expect(at('10.0.0.1')).toBe('private');
    expect(at('169.254.169.254')).toBe('link-local');
    expect(at('10.0.0.1', { ...PUBLIC_API, allowedHosts: ['Storage.Corp.Example.'] })).toBe('allowed');
    expect(at('169.254.169.254', { ...PUBLIC_API, allowedHosts: ['storage.corp.example'] })).toBe('link-local');
  });

  it('WHATWG URL normalises the odd IPv4 spellings the table relies on', () => {
    expect([hostOf('http://0/'), hostOf('http://2130706433/'), hostOf('http://017700000001/'), hostOf('http://[::ffff:169.254.169.254]/')]).toEqual([
      '0.0.0.0',
      '127.0.0.1',
      '127.0.0.1',
      '[::ffff:a9fe:a9fe]',
    ]);
    expect(addressClass('not an address')).toBe('reserved');
  });
});

/** A resolver that answers from a table and records what it was asked: no DNS query leaves the machine. */
function fakeResolver(answers: Record<string, string[]>): Resolver & { asked: string[] } {
  const asked: string[] = [];
  const resolve: Resolver = async (host) => {
    asked.push(host);
    const found = answers[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { asked });
}

/** The test's own HTTP listener on loopback: every connection it sees is counted. */
let listener: { server: Server; port: number; connections: number } | undefined;
async function listen(): Promise<NonNullable<typeof listener>> {
  const state = { connections: 0 } as NonNullable<typeof listener>;
  state.server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-length': '2', connection: 'close' }).end('ok');
  });
  state.server.on('connection', () => state.connections++);
  await new Promise<void>((resolve) => state.server.listen(0, '127.0.0.1', resolve));
  state.port = (state.server.address() as AddressInfo).port;
  listener = state;
  return state;
}
afterEach(async () => {
  listener?.server.closeAllConnections();
  await new Promise((resolve) => (listener ? listener.server.close(resolve) : resolve(undefined)));
  listener = undefined;
});

describe('the resolved-address step', () => {
  it('refuses a name when any address it resolves to is refused (metadata behind a public name)', async () => {
    const resolve = fakeResolver({ 'evil.example': ['52.216.1.1', '169.254.169.254'] });
    const err = await checkedAddresses('evil.example', PUBLIC_API, resolve).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutboundRefused);
    expect(err).toMatchObject({ rule: 'link-local', address: '169.254.169.254' });
  });

  it('refuses a private answer from a public API, and lets a listed host through', async () => {
    const resolve = fakeResolver({ 'minio.corp': ['10.0.0.1'] });
    await expect(checkedAddresses('minio.corp', PUBLIC_API, resolve)).rejects.toMatchObject({ rule: 'private', address: '10.0.0.1' });
    await expect(checkedAddresses('minio.corp', { ...PUBLIC_API, allowedHosts: ['minio.corp'] }, resolve)).resolves.toEqual(['10.0.0.1']);
  });

  it("classifies the API's own origin by what its host resolves to (GHES on a private network)", async () => {
    const resolve = fakeResolver({ 'ghe.corp': ['10.9.8.7'] });
    const ctx = await outboundContext('https://ghe.corp/api/v3', [], resolve);
    expect(ctx.api).toEqual({ protocol: 'https:', addresses: ['10.9.8.7'] });
    await expect(checkedAddresses('10.0.0.1', ctx, resolve)).resolves.toEqual(['10.0.0.1']);
    // A host that does not resolve is neither loopback nor private.
    const unknown = await outboundContext('https://nowhere.invalid', [], resolve);
    expect(unknown.api?.addresses).toEqual([]);
    expect(decideOutbound({ host: '10.0.0.1' }, unknown)).toMatchObject({ allowed: false, rule: 'private' });
  });

  it('connects undici to the checked address, and refuses before connecting when the resolver names a refused one', async () => {
    const own = await listen();
    // The emulator's case: a loopback API, a name that resolves to loopback.
    const resolve = fakeResolver({ 'storage.test': ['127.0.0.1'], 'metadata.test': ['169.254.169.254'], 'inside.test': ['10.0.0.1'] });
    const agent = guardedAgent(LOOPBACK_API, resolve);
    try {
      const res = await request(`http://storage.test:${own.port}/x`, { dispatcher: agent });
      expect(await res.body.text()).toBe('ok');
      expect(own.connections).toBe(1);
      await expect(request(`http://metadata.test:${own.port}/x`, { dispatcher: agent })).rejects.toMatchObject({ rule: 'link-local' });
      // From a public API, a loopback answer is refused too (and the listener, where it would have gone, sees nothing).
      const strict = guardedAgent(PUBLIC_API, resolve);
      await expect(request(`https://storage.test:${own.port}/x`, { dispatcher: strict })).rejects.toMatchObject({ rule: 'loopback' });
      await strict.close();
      expect(own.connections).toBe(1);
    } finally {
      await agent.close();
    }
  });

  it('LONGHAUL_ALLOWED_HOSTS lets a listed loopback host through from a public API, connecting to the checked address', async () => {
    const own = await listen();
    const resolve = fakeResolver({ 'sink.internal': ['127.0.0.1'] });
    const agent = guardedAgent({ ...PUBLIC_API, allowedHosts: ['sink.internal'] }, resolve);
    try {
      // https to the listener would need a certificate: the address step is what the list lifts, judged here over http.
      const res = await request(`http://sink.internal:${own.port}/x`, { dispatcher: agent });
      expect(await res.body.text()).toBe('ok');
      expect(own.connections).toBe(1);
      expect(resolve.asked).toEqual(['sink.internal']);
    } finally {
      await agent.close();
    }
  });
});

describe('the token-less client applies the policy before connecting', () => {
  it('refuses a storage GET to a link-local name with OutboundAddressRefused, naming the rule and connecting nowhere', async () => {
    const resolve = fakeResolver({ 'storage.test': ['169.254.169.254'] });
    const client = new StorageClient({ api: 'storage', route: '/object', outbound: () => PRIVATE_API, resolve });
    const err = await failureOf(client.get(new URL('https://storage.test/archive.tar.gz?X-Amz-Signature=secret')));
    expect(err.type).toBe(FailureType.OutboundRefused);
    expect(err.nonRetryable).toBe(true);
    expect(err.message).toContain('rule link-local');
    expect(err.message).toContain('https://storage.test/archive.tar.gz');
    expect(err.message).not.toContain('secret');
    expect(err.details?.[0]).toMatchObject({ rule: 'link-local', address: '169.254.169.254' });
  });

  it('refuses a sink POST to 10.0.0.1 from a public API before any connection (no dispatcher is even asked)', async () => {
    const client = new TokenlessClient({ api: 'sink', route: '/sink', outbound: () => PUBLIC_API, resolve: fakeResolver({}) });
    const err = await failureOf(client.send({ method: 'POST', url: 'https://10.0.0.1/hook', body: '{}' }));
    expect(err.type).toBe(FailureType.OutboundRefused);
    expect(err.details?.[0]).toMatchObject({ rule: 'private' });
  });

  it('is at its strictest without a context: http is refused', async () => {
    const own = await listen();
    const client = new StorageClient({ api: 'storage', route: '/object' });
    const err = await failureOf(client.get(new URL(`http://127.0.0.1:${own.port}/x`)));
    expect(err.details?.[0]).toMatchObject({ rule: 'scheme' });
    expect(own.connections).toBe(0);
  });

  it('a storage GET still works on loopback when the API is the emulator', async () => {
    const own = await listen();
    const client = new StorageClient({ api: 'storage', route: '/object', outbound: () => LOOPBACK_API });
    const res = await client.get(new URL(`http://127.0.0.1:${own.port}/x`));
    expect(res.statusCode).toBe(200);
    res.body.destroy();
    expect(own.connections).toBe(1);
  });
});

describe('LONGHAUL_ALLOWED_HOSTS', () => {
  it('reads names and addresses separated by commas, and refuses what is neither', () => {
    expect(allowedHosts({ LONGHAUL_ALLOWED_HOSTS: ' minio.corp , 10.0.0.5,[fd00::1], fd00::2 ' })).toEqual(['minio.corp', '10.0.0.5', '[fd00::1]', 'fd00::2']);
    expect(allowedHosts({})).toEqual([]);
    expect(() => allowedHosts({ LONGHAUL_ALLOWED_HOSTS: 'http://minio.corp:9000' })).toThrow(ConfigError);
    expect(() => allowedHosts({ LONGHAUL_ALLOWED_HOSTS: '10.0.0.0/8' })).toThrow(ConfigError);
  });
});
