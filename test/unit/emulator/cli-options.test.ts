/**
 * The standalone emulator's options: a config file holds any EmulatorOptions and an unknown key is an error
 * naming it (at any depth); flags win over the file, the file over the defaults; only given flags count.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configSummary, EmulatorConfigError, flagOptions, httpUrl, msOrRange, parseConfig, resolveOptions } from '../../../packages/emulator/src/cli-options';

const failureOf = (run: () => unknown): Error => {
  try {
    run();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a failure');
};

describe('emulator config file', () => {
  it('names an unknown key, at any depth', () => {
    for (const [config, key] of [
      [{ colour: 'red' }, "'colour'"],
      [{ migrations: { exportMS: 5 } }, "'migrations.exportMS'"],
      [{ rateLimit: { secondary: { retryafter: false } } }, "'rateLimit.secondary.retryafter'"],
      [{ google: { buckets: { scheduled: 1 } } }, "'google.buckets.scheduled'"],
    ] as const) {
      const err = failureOf(() => parseConfig(JSON.stringify(config), 'emulator.json'));
      expect(err).toBeInstanceOf(EmulatorConfigError);
      expect(err.message).toContain('emulator.json');
      expect(err.message).toContain(`unknown emulator option ${key}`);
    }
  });

  it('refuses what is not a JSON object, and a module given as a value', () => {
    expect(failureOf(() => parseConfig('{"port": 1', 'a.json')).message).toMatch(/a\.json is not valid JSON/);
    expect(failureOf(() => parseConfig('[1]', 'a.json')).message).toMatch(/must hold a JSON object/);
    expect(failureOf(() => parseConfig('{"feeds": 3}', 'a.json')).message).toMatch(/'feeds' must be an object/);
  });

  it('accepts every option, those without a default included', () => {
    const config = {
      host: '0.0.0.0',
      dataDir: 'state',
      faults: [{ kind: 'status', status: 502 }],
      rateLimit: { limit: 10, secondary: { maxConcurrent: 2, retryAfter: false } },
      migrations: { exportMs: [100, 200], failRepositories: ['beta'] },
      hooks: { outcome: 500, spam: { perMinute: 3 } },
      imports: { requiredCredentials: { username: 'u', password: 'p' } },
      google: { fixture: { projects: [] }, dns: { changeMs: 10 } },
      fixture: { accounts: [] },
    };
    expect(parseConfig(JSON.stringify(config), 'ok.json')).toEqual(config);
  });
});

describe('emulator options from defaults, config file and flags', () => {
  it('lets flags win over the file and the file over the defaults, merging objects key by key', async () => {
    const file = join(await mkdtemp(join(tmpdir(), 'longhaul-emulator-config-')), 'emulator.json');
    await writeFile(file, JSON.stringify({ port: 9100, migrations: { exportMs: 100, archiveBytes: 2048 }, rateLimit: { secondary: { maxConcurrent: 3 } }, hooks: { outcome: 503 } }));
    const options = resolveOptions({ config: file, exportMs: [1000, 2000], contentPerHour: 7, dataDir: 'here' });
    expect(options).toMatchObject({ host: '127.0.0.1', port: 9100, storagePort: 8788, dataDir: 'here', migrations: { exportMs: [1000, 2000], archiveBytes: 2048 }, rateLimit: { secondary: { maxConcurrent: 3, contentPerHour: 7 } } });
    // JSON cannot hold a function: a number is the status every delivery target answers.
    expect(options.hooks?.outcome?.({ hookId: 1, guid: 'g', event: 'push', redelivery: false })).toBe(503);
    expect(configSummary(options).join('\n')).toMatch(/state: +kept in here[\s\S]*"maxConcurrent":3[\s\S]*"exportMs":\[1000,2000\]/);
  });

  it('counts only the flags given', () => {
    expect(flagOptions({})).toEqual({});
    expect(flagOptions({ rateWindow: 60, bucketRunningMs: 5 })).toEqual({ rateLimit: { windowMs: 60_000 }, google: { buckets: { runningMs: 5 } } });
    // One Google port given: the others keep their standalone defaults (objects merge key by key).
    expect(flagOptions({ dnsPort: 0 })).toEqual({ googlePorts: { dns: 0 } });
    expect(resolveOptions({ dnsPort: 0 }).googlePorts).toEqual({ apikeys: 8789, logging: 8790, dns: 0 });
  });

  it('reads the storage public URL as an absolute http(s) URL, and rate limiting as on or off', () => {
    expect(httpUrl('https://storage.example.test:9443/archives/')).toBe('https://storage.example.test:9443/archives');
    expect(() => httpUrl('storage.example.test')).toThrow(/absolute URL/);
    expect(() => httpUrl('ftp://storage.example.test')).toThrow(/http or https/);
    expect(() => httpUrl('http://storage.example.test/?x=1')).toThrow(/no query/);
    expect(flagOptions({ storagePublicUrl: 'http://s.example.test', rateLimiting: false })).toEqual({ storagePublicUrl: 'http://s.example.test', rateLimit: { enabled: false } });
    expect(parseConfig(JSON.stringify({ storagePublicUrl: 'http://s.example.test', rateLimit: { enabled: false } }), 'ok.json')).toEqual({ storagePublicUrl: 'http://s.example.test', rateLimit: { enabled: false } });
    expect(configSummary(resolveOptions({ storagePublicUrl: 'http://s.example.test' })).join('\n')).toMatch(/storage links: +pre-signed under http:\/\/s\.example\.test/);
    // The GitHub API's public URL, the same way.
    expect(flagOptions({ apiPublicUrl: 'https://ghe.example.test/api/v3' })).toEqual({ apiPublicUrl: 'https://ghe.example.test/api/v3' });
    expect(parseConfig(JSON.stringify({ apiPublicUrl: 'https://ghe.example.test/api/v3' }), 'ok.json')).toEqual({ apiPublicUrl: 'https://ghe.example.test/api/v3' });
    expect(configSummary(resolveOptions({ apiPublicUrl: 'https://ghe.example.test/api/v3' })).join('\n')).toMatch(/api links: +under https:\/\/ghe\.example\.test\/api\/v3/);
    expect(configSummary(resolveOptions({})).join('\n')).toMatch(/api links: +under the address the GitHub API listens on/);
  });

  it('reads an export time as fixed milliseconds or a range', () => {
    expect(msOrRange('5000')).toBe(5000);
    expect(msOrRange('2000-6000')).toEqual([2000, 6000]);
    expect(() => msOrRange('6000-2000')).toThrow(/low to high/);
    expect(() => msOrRange('soon')).toThrow(/milliseconds/);
  });
});
