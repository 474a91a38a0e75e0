/**
 * The outbound policy (issue 35): where the worker may connect when the address did not come from its own
 * configuration: an archive's 302 `Location` and storage's redirects, an HTTP sink's URL, a `Link` or redirect
 * that leaves the API's origin. One pure decision (`decideOutbound`), kept as data (the address ranges below),
 * and the two places it is applied:
 *
 * - before anything is sent: the scheme and, for an address written in the URL, the address itself;
 * - when the connection is made: every address the host name resolves to (`checkedAddresses`), and the
 *   socket goes to the address that was checked (`guardedLookup` for undici, an explicit address for the
 *   archive transport), so a second DNS answer cannot swap in another one (DNS rebinding).
 *
 * The rules: `https` only, unless the API's own origin is `http` on loopback (the emulator, tests); never the
 * unspecified, link-local, multicast, broadcast or reserved addresses (IPv4-mapped and NAT64 forms included);
 * loopback and private ranges only when the API's own host is loopback or private (GHES in a company network) or
 * the operator lists the host in `LONGHAUL_ALLOWED_HOSTS`. The name resolution is injectable, so tests decide
 * private and link-local refusals without sending a packet anywhere.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { ApplicationFailure } from '@temporalio/common';
import { Agent } from 'undici';
import { FailureType } from './retry-policy';

/** What kind of address a refusal met; `scheme` is a URL that is not `https` where only `https` goes. */
export type OutboundRule = 'scheme' | 'unspecified' | 'link-local' | 'multicast' | 'broadcast' | 'reserved' | 'loopback' | 'private';

export type OutboundDecision = { allowed: true } | { allowed: false; rule: OutboundRule; reason: string };

/** Where the address came from: the API whose answer (or whose process) named it, and the operator's list. */
export interface OutboundContext {
  /** The API's own origin: its scheme and the addresses its host resolves to (empty when unknown). */
  api?: { protocol: string; addresses: readonly string[] };
  /** `LONGHAUL_ALLOWED_HOSTS`: host names or addresses that may be loopback or private. */
  allowedHosts: readonly string[];
}

/** The target of one connection: the URL's scheme (when known here), its host, and an address it resolved to. */
export interface OutboundTarget {
  protocol?: string;
  host: string;
  address?: string;
}

type AddressClass = Exclude<OutboundRule, 'scheme'> | 'public';

/**
 * The address ranges by class, checked in this order (the first that holds an address names it). IPv4 ranges
 * also match their IPv4-mapped IPv6 forms (`::ffff:169.254.169.254`: `BlockList` compares them as IPv4), and
 * their images in NAT64's well-known prefix (`64:ff9b::a9fe:a9fe`) are added below.
 */
const RANGES: readonly (readonly [Exclude<AddressClass, 'public'>, readonly string[]])[] = [
  ['unspecified', ['0.0.0.0/8', '::/128']],
  ['loopback', ['127.0.0.0/8', '::1/128']],
  ['link-local', ['169.254.0.0/16', 'fe80::/10']],
  ['multicast', ['224.0.0.0/4', 'ff00::/8']],
  ['broadcast', ['255.255.255.255/32']],
  // 6to4 and Teredo carry an IPv4 address the relay chooses to reach; IPv4-compatible (::/96) is deprecated.
  ['reserved', ['240.0.0.0/4', '::/96', '100::/64', '2002::/16', '2001::/32']],
  ['private', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', 'fc00::/7', 'fec0::/10', '64:ff9b:1::/48']],
];

/** The NAT64 image of an IPv4 range: `64:ff9b::/96` followed by the 32 bits of the address. */
function nat64(cidr: string): string | undefined {
  const [address, bits] = cidr.split('/');
  if (isIP(address) !== 4) return undefined;
  const [a, b, c, d] = address.split('.').map(Number);
  const hex = (hi: number, lo: number) => ((hi << 8) | lo).toString(16);
  return `64:ff9b::${hex(a, b)}:${hex(c, d)}/${96 + Number(bits)}`;
}

const LISTS: readonly (readonly [Exclude<AddressClass, 'public'>, BlockList])[] = RANGES.map(([kind, cidrs]) => {
  const list = new BlockList();
  for (const cidr of [...cidrs, ...cidrs.map(nat64).filter((c): c is string => c !== undefined)]) {
    const [address, bits] = cidr.split('/');
    list.addSubnet(address, Number(bits), isIP(address) === 6 ? 'ipv6' : 'ipv4');
  }
  return [kind, list] as const;
});

/** The class of one IP address (`public` for anything no range holds; a string that is no address is `reserved`). */
export function addressClass(address: string): AddressClass {
  const family = isIP(address);
  if (family === 0) return 'reserved';
  const type = family === 6 ? 'ipv6' : 'ipv4';
  for (const [kind, list] of LISTS) if (list.check(address, type)) return kind;
  return 'public';
}

/** A URL's host as an address or name: without IPv6 brackets, lower case, without a trailing dot. */
export function bareHost(hostname: string): string {
  return hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();
}

const internal = (kind: AddressClass) => kind === 'loopback' || kind === 'private';

/** The API's own host is loopback or private (every address it resolves to): then so may the addresses it names be. */
function apiIsInternal(ctx: OutboundContext): boolean {
  const addresses = ctx.api?.addresses ?? [];
  return addresses.length > 0 && addresses.every((a) => internal(addressClass(a)));
}

function apiIsLoopback(ctx: OutboundContext): boolean {
  const addresses = ctx.api?.addresses ?? [];
  return addresses.length > 0 && addresses.every((a) => addressClass(a) === 'loopback');
}

function listed(target: OutboundTarget, ctx: OutboundContext): boolean {
  const names = new Set(ctx.allowedHosts.map(bareHost));
  return names.has(bareHost(target.host)) || (target.address !== undefined && names.has(bareHost(target.address)));
}

const WHY: Record<Exclude<AddressClass, 'public'>, string> = {
  unspecified: 'an unspecified address (0.0.0.0, ::) is never connected to',
  'link-local': 'a link-local address (169.254.0.0/16, fe80::/10: cloud metadata among them) is never connected to',
  multicast: 'a multicast address is never connected to',
  broadcast: 'the broadcast address is never connected to',
  reserved: 'a reserved address (240.0.0.0/4, 6to4, Teredo, IPv4-compatible IPv6) is never connected to',
  loopback: "a loopback address is reached only when the API's own host is loopback or private, or the host is in LONGHAUL_ALLOWED_HOSTS",
  private: "a private address (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7) is reached only when the API's own host is loopback or private, or the host is in LONGHAUL_ALLOWED_HOSTS",
};

/**
 * Whether the worker may connect to `target` for an address it did not take from its own configuration. Without
 * `address`, the host is judged if it is an address itself (what can be decided before any name is resolved);
 * a name is then allowed here, and each address it resolves to is judged again before the connection.
 */
export function decideOutbound(target: OutboundTarget, ctx: OutboundContext): OutboundDecision {
  if (target.protocol !== undefined && target.protocol !== 'https:') {
    const emulated = target.protocol === 'http:' && ctx.api?.protocol === 'http:' && apiIsLoopback(ctx);
    if (!emulated) return { allowed: false, rule: 'scheme', reason: `only https is allowed (${target.protocol.replace(/:$/, '')} only when the API itself is http on loopback)` };
  }
  const host = bareHost(target.host);
  const address = target.address ?? (isIP(host) ? host : undefined);
  if (address === undefined) return { allowed: true };
  const kind = addressClass(bareHost(address));
  if (kind === 'public') return { allowed: true };
  if (internal(kind) && (apiIsInternal(ctx) || listed(target, ctx))) return { allowed: true };
  return { allowed: false, rule: kind, reason: WHY[kind] };
}

/** The addresses of a host name (all of them, in the resolver's order). */
export type Resolver = (hostname: string) => Promise<readonly { address: string; family: number }[]>;

export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** A connection the policy refused: `where` is the URL without its query (pre-signed URLs sign there). */
export class OutboundRefused extends Error {
  override readonly name = 'OutboundRefused';
  constructor(
    readonly rule: OutboundRule,
    readonly where: string,
    readonly address: string | undefined,
    readonly reason: string,
  ) {
    super(`${where}${address && address !== where ? ` (${address})` : ''}: refused by the outbound policy, rule ${rule}: ${reason}`);
  }
}

/** The refusal as a typed, permanent failure; nothing was sent, so nothing any such address answers is in it. */
export function outboundFailure(refusal: OutboundRefused, method: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: FailureType.OutboundRefused,
    message: `${method} ${refusal.message}`,
    nonRetryable: true,
    details: [{ method, url: refusal.where, rule: refusal.rule, address: refusal.address }],
  });
}

/** The URL without query and fragment, for messages. */
export function shownUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/** Throws `OutboundRefused` unless the URL may be asked for, judged before any name is resolved. */
export function checkOutboundUrl(url: URL, ctx: OutboundContext): void {
  const decision = decideOutbound({ protocol: url.protocol, host: url.hostname }, ctx);
  if (!decision.allowed) throw new OutboundRefused(decision.rule, shownUrl(url), undefined, decision.reason);
}

/**
 * The addresses to connect to for `host`, every one of them allowed (one refused address refuses the host: a name
 * that also resolves to cloud metadata is not used). An address as host is judged as it is, without resolving.
 */
export async function checkedAddresses(host: string, ctx: OutboundContext, resolve: Resolver = systemResolver, where = host): Promise<string[]> {
  const bare = bareHost(host);
  const addresses = isIP(bare) ? [bare] : (await resolve(bare)).map((a) => a.address);
  for (const address of addresses) {
    const decision = decideOutbound({ host: bare, address }, ctx);
    if (!decision.allowed) throw new OutboundRefused(decision.rule, where, address, decision.reason);
  }
  if (addresses.length === 0) throw new Error(`${bare} resolved to no address`);
  return addresses;
}

/**
 * The context of addresses an API's answers (or its process's inputs) name: the API's scheme and what its own
 * host resolves to. A host that does not resolve counts as neither loopback nor private.
 */
export async function outboundContext(apiBaseUrl: string | URL | undefined, allowedHosts: readonly string[], resolve: Resolver = systemResolver): Promise<OutboundContext> {
  if (apiBaseUrl === undefined) return { allowedHosts };
  const api = new URL(apiBaseUrl);
  const host = bareHost(api.hostname);
  const addresses = isIP(host) ? [host] : await resolve(host).then((found) => found.map((a) => a.address), () => [] as string[]);
  return { api: { protocol: api.protocol, addresses }, allowedHosts };
}

/**
 * A `lookup` for `net.connect`/`tls.connect` (undici's `connect` option): resolves, refuses unless every address is
 * allowed, and hands the socket exactly the checked addresses. Node asks for one address, or for all of them
 * (`all: true`, when it tries families in turn).
 */
export function guardedLookup(ctx: OutboundContext, resolve: Resolver = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    checkedAddresses(hostname, ctx, resolve).then(
      (addresses) => {
        const entries = addresses.map((address) => ({ address, family: isIP(address) }));
        if ((options as { all?: boolean }).all) (callback as unknown as (err: null, all: typeof entries) => void)(null, entries);
        else callback(null, entries[0].address, entries[0].family);
      },
      (err: Error) => callback(err as NodeJS.ErrnoException, '', 0),
    );
  };
}

/** An undici dispatcher whose every connection passes `guardedLookup` (close it when done). */
export function guardedAgent(ctx: OutboundContext, resolve: Resolver = systemResolver): Agent {
  return new Agent({ connect: { lookup: guardedLookup(ctx, resolve) } });
}

/** The operator's part of the policy, as activities receive it (`LONGHAUL_ALLOWED_HOSTS`, and a resolver for tests). */
export interface OutboundSettings {
  allowedHosts: readonly string[];
  resolve?: Resolver;
}
