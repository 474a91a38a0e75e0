/**
 * The worker's way out (issue 41): one proxy setting for every outbound connection, and the company's CA for
 * every TLS connection.
 *
 * - The proxy is the standard variables: `HTTPS_PROXY` for https URLs, `HTTP_PROXY` for http URLs (and for https
 *   ones when `HTTPS_PROXY` is unset), `NO_PROXY` for the hosts reached directly; the lower-case forms win, as in
 *   undici and curl. A proxy URL may carry credentials (`http://user:password@proxy:3128`); `HTTPS_PROXY_FILE` /
 *   `HTTP_PROXY_FILE` name a file holding the whole URL instead (a mounted secret). Credentials are never shown:
 *   `shownProxy` is what logs, `longhaul doctor` and errors print.
 * - `applyNetworkSettings` runs once per process before any connection: it writes the effective values back under
 *   both spellings (so every library reads the same ones: the storage SDKs and Google's token minting read the
 *   environment themselves, and not all in the same order), makes undici's `EnvHttpProxyAgent` the global
 *   dispatcher (Node's `fetch`: GitHub App token minting, GCS resumable uploads), and adds `LONGHAUL_CA_FILE`'s
 *   certificates to every TLS context the process creates.
 * - The clients the worker builds itself use `proxyDispatcher` (undici) and `proxyFor` (the archive transport,
 *   the S3 client, `longhaul doctor`); `proxyFor` decides as `EnvHttpProxyAgent` does, so one URL never takes two
 *   ways out.
 *
 * Why the CA goes into every secure context instead of a `ca` option: an explicit `ca` replaces Node's roots (and
 * `NODE_EXTRA_CA_CERTS`), and two of the storage SDKs (GCS's gaxios and teeny-request, Azure's pipeline) take no
 * TLS option at all. Node 20 has no `tls.setDefaultCACertificates`; `NODE_EXTRA_CA_CERTS` is read at start-up only.
 */
import { readFileSync } from 'node:fs';
import tls from 'node:tls';
import { EnvHttpProxyAgent, setGlobalDispatcher, type Dispatcher } from 'undici';
import { ConfigError } from '../config';
import { setting } from '../settings';

export interface NetworkSettings {
  /** For https URLs (`HTTPS_PROXY`, else `HTTP_PROXY`). */
  httpsProxy?: URL;
  /** For http URLs (`HTTP_PROXY`). */
  httpProxy?: URL;
  /** `NO_PROXY` as given: host names (a leading `.` or `*.` for the domain), `host:port`, or `*`. */
  noProxy: string;
  /** `LONGHAUL_CA_FILE`: PEM certificates trusted besides Node's roots (a TLS-inspecting proxy's CA). */
  caFile?: string;
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 };

/** A value under its lower-case name first, then upper case; or the file named by `<NAME>_FILE`. */
function proxyValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const direct = env[name.toLowerCase()] || env[name];
  if (direct) return direct.trim();
  const file = env[`${name.toLowerCase()}_FILE`] || env[`${name}_FILE`];
  if (!file) return undefined;
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new ConfigError(`${name}_FILE: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

function proxyUrl(name: string, value: string | undefined): URL | undefined {
  if (!value) return undefined;
  let url: URL | undefined;
  try {
    // `proxy:3128` without a scheme is read as http, as curl does.
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`);
  } catch {
    url = undefined;
  }
  // The value is not repeated: it may hold the proxy's password.
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) throw new ConfigError(`${name} must be an http(s) proxy URL (http://[user:password@]host:port)`);
  return url;
}

/** The proxy and CA settings of `env`; throws `ConfigError` for a malformed URL or an unreadable file. */
export function networkSettings(env: NodeJS.ProcessEnv = process.env): NetworkSettings {
  const httpProxy = proxyUrl('HTTP_PROXY', proxyValue(env, 'HTTP_PROXY'));
  const httpsProxy = proxyUrl('HTTPS_PROXY', proxyValue(env, 'HTTPS_PROXY')) ?? httpProxy;
  const caFile = setting('LONGHAUL_CA_FILE', env) || undefined;
  return { httpsProxy, httpProxy, noProxy: (env.no_proxy ?? env.NO_PROXY ?? '').trim(), ...(caFile ? { caFile } : {}) };
}

/** A proxy URL as it may be shown: no user name, no password, no path. */
export function shownProxy(proxy: URL | undefined): string {
  if (!proxy) return 'direct';
  return `${proxy.protocol}//${proxy.username || proxy.password ? '***@' : ''}${proxy.host}`;
}

/** One line for logs and `longhaul doctor`: the proxies in effect (without credentials), `NO_PROXY` and the CA file. */
export function describeNetwork(settings: NetworkSettings): string {
  const proxies = settings.httpsProxy || settings.httpProxy ? `https via ${shownProxy(settings.httpsProxy)}, http via ${shownProxy(settings.httpProxy)}` : 'direct (no HTTPS_PROXY or HTTP_PROXY)';
  return [proxies, ...(settings.noProxy ? [`NO_PROXY ${settings.noProxy}`] : []), ...(settings.caFile ? [`extra CA ${settings.caFile}`] : [])].join('; ');
}

/** Whether `NO_PROXY` sends `url` direct: undici's `EnvHttpProxyAgent` rules (exact host, or a subdomain; a port if given). */
function bypassed(url: URL, noProxy: string): boolean {
  const entries = noProxy.split(/[,\s]/).filter(Boolean);
  if (entries.length === 0) return false;
  if (noProxy === '*') return true;
  const host = url.host.replace(/:\d*$/, '').toLowerCase();
  const port = Number.parseInt(url.port, 10) || DEFAULT_PORTS[url.protocol] || 0;
  return entries.some((entry) => {
    const parsed = /^(.+):(\d+)$/.exec(entry);
    const name = (parsed ? parsed[1] : entry).replace(/^\*?\./, '').toLowerCase();
    if (parsed && Number(parsed[2]) !== port) return false;
    return host === name || host.endsWith(`.${name}`);
  });
}

/** The proxy a connection to `url` goes through, or undefined for a direct connection. */
export function proxyFor(url: URL, settings: NetworkSettings): URL | undefined {
  if (bypassed(url, settings.noProxy)) return undefined;
  return url.protocol === 'https:' ? settings.httpsProxy : url.protocol === 'http:' ? settings.httpProxy : undefined;
}

/** `Proxy-Authorization` for a proxy URL's credentials (Basic, as undici sends it), or undefined. */
export function proxyAuthorization(proxy: URL): string | undefined {
  if (!proxy.username && !proxy.password) return undefined;
  return `Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64')}`;
}

/** undici's proxy-aware dispatcher for `settings` (direct for `NO_PROXY` hosts); `options` apply to every connection. */
export function proxyDispatcher(settings: NetworkSettings, options: ConstructorParameters<typeof EnvHttpProxyAgent>[0] = {}): Dispatcher {
  return new EnvHttpProxyAgent({ ...options, httpProxy: settings.httpProxy?.href ?? '', httpsProxy: settings.httpsProxy?.href ?? '', noProxy: settings.noProxy });
}

let applied: NetworkSettings | undefined;
let shared: Dispatcher | undefined;

/**
 * The process's dispatcher for the API clients and proxied sink requests: `proxyDispatcher` of the settings in
 * effect, its connections kept alive and pooled.
 */
export function sharedDispatcher(): Dispatcher {
  shared ??= proxyDispatcher(currentNetworkSettings(), { keepAliveTimeout: 10_000, connections: 64 });
  return shared;
}

/** The settings `applyNetworkSettings` put in effect (those of the process's environment when it was not called). */
export function currentNetworkSettings(): NetworkSettings {
  return applied ?? networkSettings();
}

/**
 * Puts the settings in effect for the whole process (once, before any connection): see the module's comment.
 * Returns them.
 */
export function applyNetworkSettings(env: NodeJS.ProcessEnv = process.env): NetworkSettings {
  const settings = networkSettings(env);
  if (applied) return settings;
  // Into the process's environment, which the libraries read.
  const put = (name: string, value: string | undefined) => {
    if (value === undefined) return;
    process.env[name] = value;
    process.env[name.toLowerCase()] = value;
  };
  put('HTTPS_PROXY', settings.httpsProxy?.href);
  put('HTTP_PROXY', settings.httpProxy?.href);
  if (settings.noProxy) put('NO_PROXY', settings.noProxy);
  if (settings.caFile) trustCertificates(settings.caFile);
  if (settings.httpsProxy || settings.httpProxy) setGlobalDispatcher(proxyDispatcher(settings));
  applied = settings;
  return settings;
}

/** Adds the PEM file's certificates to every TLS context created from now on (Node's roots stay trusted). */
function trustCertificates(file: string): void {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`LONGHAUL_CA_FILE: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const certificates = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (certificates.length === 0) throw new ConfigError(`LONGHAUL_CA_FILE: ${file} holds no PEM certificate`);
  const create = tls.createSecureContext;
  // `tls.connect` (and so https, undici, every SDK) asks this module property for its context.
  tls.createSecureContext = (options) => {
    const context = create(options);
    for (const certificate of certificates) (context.context as { addCACert(pem: string): void }).addCACert(certificate);
    return context;
  };
}
