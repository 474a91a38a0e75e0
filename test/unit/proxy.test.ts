/** The proxy settings (`src/http/proxy.ts`): which variables win, `_FILE`, `NO_PROXY`'s rules, and what is shown. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config';
import { describeNetwork, networkSettings, proxyAuthorization, proxyFor, shownProxy } from '../../src/http/proxy';

const PROXY = 'http://egress.corp.example:3128';

describe('networkSettings', () => {
  it('reads the lower-case forms first, HTTP_PROXY for https when HTTPS_PROXY is unset, and a scheme-less value as http', () => {
    expect(networkSettings({ HTTPS_PROXY: 'http://upper:1', https_proxy: 'http://lower:2' }).httpsProxy?.host).toBe('lower:2');
    const onlyHttp = networkSettings({ HTTP_PROXY: 'proxy.corp.example:3128' });
    expect(onlyHttp.httpProxy?.href).toBe('http://proxy.corp.example:3128/');
    expect(onlyHttp.httpsProxy?.href).toBe('http://proxy.corp.example:3128/');
    expect(networkSettings({})).toEqual({ httpsProxy: undefined, httpProxy: undefined, noProxy: '' });
  });

  it('reads the whole URL, credentials included, from HTTPS_PROXY_FILE', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'longhaul-proxy-unit-')), 'url');
    writeFileSync(file, 'http://user:s%40cret@egress.corp.example:3128\n');
    const settings = networkSettings({ HTTPS_PROXY_FILE: file });
    expect(settings.httpsProxy?.username).toBe('user');
    expect(proxyAuthorization(settings.httpsProxy!)).toBe(`Basic ${Buffer.from('user:s@cret').toString('base64')}`);
    expect(shownProxy(settings.httpsProxy)).toBe('http://***@egress.corp.example:3128');
    expect(describeNetwork(settings)).toBe('https via http://***@egress.corp.example:3128, http via direct');
    expect(() => networkSettings({ HTTPS_PROXY_FILE: join(file, 'missing') })).toThrow(ConfigError);
  });

  it('refuses a proxy URL that is not http(s) without repeating it (it may hold a password)', () => {
    let error: Error | undefined;
    try {
      networkSettings({ HTTPS_PROXY: 'socks5://user:hunter2@proxy:1080' });
    } catch (err) {
      error = err as Error;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.message).toContain('HTTPS_PROXY');
    expect(error!.message).not.toContain('hunter2');
  });
});

describe('proxyFor', () => {
  const settings = (noProxy: string) => networkSettings({ HTTPS_PROXY: PROXY, HTTP_PROXY: 'http://plain.corp.example:8080', NO_PROXY: noProxy });
  const via = (url: string, noProxy = '') => proxyFor(new URL(url), settings(noProxy))?.host;

  it('takes the https proxy for https URLs and the http proxy for http URLs', () => {
    expect(via('https://api.github.com/orgs/x')).toBe('egress.corp.example:3128');
    expect(via('http://storage.internal:9000/a')).toBe('plain.corp.example:8080');
  });

  it.each([
    ['github.example', 'https://github.example/api/v3', undefined],
    ['github.example', 'https://api.github.example/', undefined],
    ['.github.example', 'https://api.github.example/', undefined],
    ['*.github.example', 'https://api.github.example/', undefined],
    ['github.example', 'https://notgithub.example/', 'egress.corp.example:3128'],
    ['github.example:8443', 'https://github.example/', 'egress.corp.example:3128'],
    ['github.example:443', 'https://github.example/', undefined],
    ['10.0.0.5, localhost', 'http://localhost:8787/', undefined],
    ['*', 'https://anything.example/', undefined],
  ])('NO_PROXY=%s: %s via %s', (noProxy, url, expected) => {
    expect(via(url, noProxy)).toBe(expected);
  });
});
