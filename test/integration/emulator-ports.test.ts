/**
 * Issue 30: every port and URL of the standalone emulator is a flag and an environment variable, and one line per
 * service is printed at start, so two emulators on one machine never collide: one configured by flags, one by
 * `LONGHAUL_EMULATOR_*` variables, both on free ports, each serving on its own ten addresses, its GitHub API
 * reached through a reverse proxy of its own whose address it prints and puts in its links (`--api-public-url`,
 * `LONGHAUL_EMULATOR_API_PUBLIC_URL`), handing out archive links under its own storage public URL; and a port
 * already taken stops the second emulator with the address named rather than sharing or stealing it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/emulator-http';
import { printedUrls, startEmulatorProcess, stopEmulatorProcess, type EmulatorProcess } from '../helpers/emulator-process';
import { startReverseProxy, type ReverseProxy } from '../helpers/reverse-proxy';

const running: EmulatorProcess[] = [];
const proxies: ReverseProxy[] = [];
const SERVICES = ['GitHub API', 'google-apikeys', 'google-logging', 'google-dns', 'storage origin'];

afterAll(async () => {
  for (const proc of running) await stopEmulatorProcess(proc, 'SIGINT');
  for (const proxy of proxies) await proxy.close();
});

/** Where a printed service listens: the `(listening on …)` of its line. */
const listeningOn = (output: string, label: string) => {
  const line = output.split('\n').find((l) => l.startsWith(`  ${label}:`));
  return /\(listening on (http:\/\/127\.0\.0\.1:\d+)\)$/.exec(line ?? '')?.[1];
};

describe('two standalone emulators on one machine', () => {
  it('listen on separate ports given by flags and by environment variables, one printed line per service', { timeout: 3 * 60_000 }, async () => {
    const publicUrls = ['https://storage-one.example.test:9443', 'http://storage-two.example.test/archives'];
    // A reverse proxy in front of each GitHub API, under a path of its own (forwarding once the API listens).
    const apiTargets: string[] = [];
    for (const [i, prefix] of ['/github-one', '/api/v3'].entries()) proxies.push(await startReverseProxy(() => apiTargets[i], prefix));
    const byFlags = await startEmulatorProcess(
      ['--port', '0', '--storage-port', '0', '--apikeys-port', '0', '--logging-port', '0', '--dns-port', '0', '--storage-public-url', `${publicUrls[0]}/`, '--api-public-url', `${proxies[0].url}/`, '--export-ms', '0'],
      {},
      running,
    );
    const byEnv = await startEmulatorProcess(
      ['--export-ms', '0'],
      {
        LONGHAUL_EMULATOR_PORT: '0',
        LONGHAUL_EMULATOR_STORAGE_PORT: '0',
        LONGHAUL_EMULATOR_APIKEYS_PORT: '0',
        LONGHAUL_EMULATOR_LOGGING_PORT: '0',
        LONGHAUL_EMULATOR_DNS_PORT: '0',
        LONGHAUL_EMULATOR_STORAGE_PUBLIC_URL: publicUrls[1],
        LONGHAUL_EMULATOR_API_PUBLIC_URL: proxies[1].url,
      },
      running,
    );
    // The GitHub API's line names its public URL and where it listens, which the proxy forwards to.
    for (const [i, proc] of [byFlags, byEnv].entries()) {
      expect(printedUrls(proc.output()).get('GitHub API')).toBe(proxies[i].url);
      const listening = listeningOn(proc.output(), 'GitHub API');
      expect(listening, proc.output()).toBeDefined();
      expect(Number(new URL(listening!).port)).not.toBeOneOf([0, 8787]);
      apiTargets[i] = listening!;
    }
    const urls = [printedUrls(byFlags.output()), printedUrls(byEnv.output())];
    // The storage origin's line names its public URL (what its links carry) and where it listens.
    for (const [i, proc] of [byFlags, byEnv].entries()) {
      expect(urls[i].get('storage origin')).toBe(publicUrls[i]);
      const listening = listeningOn(proc.output(), 'storage origin');
      expect(listening, proc.output()).toBeDefined();
      expect(Number(new URL(listening!).port)).not.toBeOneOf([0, 8788]);
    }
    for (const printed of urls) expect([...printed.keys()].filter((k) => SERVICES.includes(k)).sort()).toEqual([...SERVICES].sort());
    const all = urls.flatMap((printed) => SERVICES.map((name) => printed.get(name)!));
    expect(new Set(all).size).toBe(10);
    // None of them fell back to a default port.
    for (const url of all) expect(Number(new URL(url).port)).not.toBeOneOf([8787, 8788, 8789, 8790, 8791]);

    // Each emulator answers on its own addresses with its own state.
    // (A GitHub API URL is its proxy's, path included: requests name the whole URL.)
    const github = (printed: Map<string, string>, method: string, path: string, opts: Parameters<typeof call>[3] = {}) => call(printed.get('GitHub API')!, method, `${printed.get('GitHub API')!}${path}`, opts);
    for (const [i, printed] of urls.entries()) {
      const rate = await github(printed, 'GET', '/rate_limit');
      expect(rate.status).toBe(200);
      // Through the proxy, the links it builds carry the proxy's address.
      const repo = await github(printed, 'GET', '/repos/octo-org/alpha');
      expect((repo.json as { url: string }).url).toBe(`${proxies[i].url}/repos/octo-org/alpha`);
      const config = await github(printed, 'GET', '/_emulator/config');
      expect(config.json).toMatchObject({ apiUrl: apiTargets[i], apiPublicUrl: proxies[i].url });
      const keys = await call(printed.get('google-apikeys')!, 'GET', '/v2/projects/demo-project/locations/global/keys/demo-key-1');
      expect(keys.status).toBe(200);
      const zones = await call(printed.get('google-dns')!, 'GET', '/dns/v1/projects/demo-project/managedZones/demo-zone');
      expect(zones.status).toBe(200);
    }
    // Each emulator's archive link is under its own configured public URL.
    for (const [i, printed] of urls.entries()) {
      const migration = (await github(printed, 'POST', '/orgs/octo-org/migrations', { body: { repositories: ['alpha'] } })).json as { id: number };
      const archive = await github(printed, 'GET', `/orgs/octo-org/migrations/${migration.id}/archive`);
      expect(archive.status).toBe(302);
      expect(archive.headers.location.startsWith(`${publicUrls[i]}/`), archive.headers.location).toBe(true);
    }

    const created = await github(urls[0], 'POST', '/orgs/octo-org/hooks', { body: { name: 'web', config: { url: 'https://example.test/h' } } });
    expect(created.status).toBe(201);
    expect((await github(urls[0], 'GET', '/orgs/octo-org/hooks')).json).toHaveLength(1);
    expect((await github(urls[1], 'GET', '/orgs/octo-org/hooks')).json).toHaveLength(0);

    // A port another emulator holds: the second one stops and names the address (a flag wins over its variable).
    const taken = new URL(urls[0].get('google-dns')!).port;
    const refused = startEmulatorProcess(['--port', '0', '--storage-port', '0', '--apikeys-port', '0', '--logging-port', '0', '--dns-port', taken], { LONGHAUL_EMULATOR_DNS_PORT: '0' }, running);
    await expect(refused).rejects.toThrow(new RegExp(`exited early with code 1:[\\s\\S]*EADDRINUSE[\\s\\S]*:${taken}`));
  });
});
