/**
 * `longhaul doctor`'s outbound part (issue 41): for every destination the worker's configuration names (each
 * GitHub credential's API, the Google APIs, an S3 endpoint), the way out in effect (the proxy, without its
 * credentials, or direct), and with `--reach` whether the destination answers that way: one unauthenticated GET of
 * its base URL, where any HTTP answer counts as reachable (no credential is ever sent). `--reach` is asked for, not
 * the default, because it sends requests to the internet (to api.github.com unless configured otherwise). Addresses
 * that only answers name (archive links, sinks) are not known here.
 */
import { request } from 'undici';
import type { LonghaulConfig } from '../config';
import { applyNetworkSettings, describeNetwork, proxyDispatcher, proxyFor, shownProxy } from '../http/proxy';

export interface OutboundView {
  /** What the destination is for: `github ghes`, `google-logging`, `s3`. */
  name: string;
  url: string;
  /** `http://***@proxy:3128` or `direct`. */
  via: string;
  /** Only with `--reach`. */
  reachable?: boolean;
  /** `HTTP 200`, or why not (with `--reach`). */
  answer?: string;
}

export interface OutboundReport {
  /** The settings as one line (`describeNetwork`). */
  settings: string;
  destinations: OutboundView[];
}

function destinations(config: LonghaulConfig, env: NodeJS.ProcessEnv): { name: string; url: string }[] {
  const out = [
    ...config.githubCredentials.map((c) => ({ name: `github ${c.name}`, url: c.apiUrl })),
    { name: 'google-apikeys', url: config.googleApikeysUrl },
    { name: 'google-logging', url: config.googleLoggingUrl },
    { name: 'google-dns', url: config.googleDnsUrl },
  ];
  const s3 = env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL;
  if (s3) out.push({ name: 's3', url: s3 });
  return out;
}

/** Each destination with the way out, and with `reach` its answer through it (`timeoutMs` each, all at once). */
export async function outboundReport(config: LonghaulConfig, env: NodeJS.ProcessEnv = process.env, reach = false, timeoutMs = 5_000): Promise<OutboundReport> {
  const settings = applyNetworkSettings(env);
  if (!reach) return { settings: describeNetwork(settings), destinations: destinations(config, env).map(({ name, url }) => ({ name, url, via: shownProxy(proxyFor(new URL(url), settings)) })) };
  const dispatcher = proxyDispatcher(settings, { connect: { timeout: timeoutMs } });
  try {
    const views = await Promise.all(
      destinations(config, env).map(async ({ name, url }) => {
        const via = shownProxy(proxyFor(new URL(url), settings));
        try {
          const res = await request(url, { method: 'GET', dispatcher, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs) });
          await res.body.dump();
          return { name, url, via, reachable: true, answer: `HTTP ${res.statusCode}` };
        } catch (err) {
          const cause = (err as { cause?: { message?: string } }).cause?.message;
          return { name, url, via, reachable: false, answer: `${(err as Error).message}${cause ? ` (${cause})` : ''}` };
        }
      }),
    );
    return { settings: describeNetwork(settings), destinations: views };
  } finally {
    await dispatcher.close();
  }
}

/** The report's lines for a terminal. */
export function formatOutbound(report: OutboundReport): string[] {
  const state = (d: OutboundView) => (d.reachable === undefined ? '' : d.reachable ? `: reachable (${d.answer})` : `: NOT reachable: ${d.answer}`);
  return [`outbound: ${report.settings}`, ...report.destinations.map((d) => `  ${d.name} ${d.url} via ${d.via}${state(d)}`)];
}
