/**
 * Issue 30: the GitHub API builds its links (`url` fields, `Link` headers, a 301's `Location`) from its public URL
 * (`apiPublicUrl`, `--api-public-url`), so they work behind a reverse proxy or a container's published port:
 * here a proxy serving the API under `/api/v3` of its own host, the way GitHub Enterprise Server does, and every
 * link followed through it. Without the option the links name where the API listens, as before.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { call } from '../../helpers/emulator-http';
import { startReverseProxy, type ReverseProxy } from '../../helpers/reverse-proxy';
import { startEmulator, type Emulator } from '@longhaul/emulator';

let emulator: Emulator | undefined;
let proxy: ReverseProxy | undefined;
afterEach(async () => {
  await emulator?.close();
  await proxy?.close();
  emulator = undefined;
  proxy = undefined;
});

/** The `rel="next"` URL of a `Link` header. */
const nextLink = (link: string | undefined) => /<([^>]+)>; rel="next"/.exec(link ?? '')?.[1];

describe('the GitHub API behind a reverse proxy', () => {
  it('carries its public URL in url fields, Link headers and a 301 Location, and each works through the proxy', async () => {
    proxy = await startReverseProxy(() => emulator!.apiUrl, '/api/v3');
    emulator = await startEmulator({ apiPublicUrl: `${proxy.url}/`, migrations: { exportMs: 0 } });
    const front = proxy.url;
    expect(emulator.apiPublicUrl).toBe(front);
    expect(emulator.apiUrl).not.toBe(front);

    // url fields
    const user = await call(front, 'GET', `${new URL(front).pathname}/users/octocat`);
    expect(user.status).toBe(200);
    expect((user.json as { url: string }).url).toBe(`${front}/users/octocat`);

    // A renamed repository's 301: Location and the body's url under the public URL; following it works.
    const moved = await call(front, 'GET', `${new URL(front).pathname}/repos/octo-org/alpha-legacy`);
    expect(moved.status).toBe(301);
    expect(moved.headers.location).toMatch(new RegExp(`^${front}/repositories/\\d+$`));
    expect((moved.json as { url: string }).url).toBe(moved.headers.location);
    const repo = await call(moved.headers.location, 'GET', new URL(moved.headers.location).pathname);
    expect(repo.status).toBe(200);
    expect((repo.json as { url: string; owner: { url: string } })).toMatchObject({ url: `${front}/repos/octo-org/alpha`, owner: { url: `${front}/users/octo-org` } });

    // Link headers: the next page, followed through the proxy.
    for (const repositories of [['alpha'], ['beta']]) expect((await call(front, 'POST', `${new URL(front).pathname}/orgs/octo-org/migrations`, { body: { repositories } })).status).toBe(201);
    const first = await call(front, 'GET', `${new URL(front).pathname}/orgs/octo-org/migrations?per_page=1`);
    const next = nextLink(first.headers.link);
    expect(next?.startsWith(`${front}/orgs/octo-org/migrations?`), first.headers.link).toBe(true);
    const second = await call(next!, 'GET', `${new URL(next!).pathname}${new URL(next!).search}`);
    expect(second.status).toBe(200);
    expect((second.json as { url: string }[]).map((m) => m.url)).toEqual([expect.stringMatching(new RegExp(`^${front}/orgs/octo-org/migrations/\\d+$`))]);

    // The emulator saw the paths without the proxy's prefix; its config names both addresses.
    expect(proxy.forwarded.every((p) => !p.startsWith('/api/v3'))).toBe(true);
    const config = (await call(emulator.apiUrl, 'GET', '/_emulator/config')).json as { apiUrl: string; apiPublicUrl: string };
    expect(config).toMatchObject({ apiUrl: emulator.apiUrl, apiPublicUrl: front });
  });

  it('without a public URL, links name where the API listens', async () => {
    emulator = await startEmulator();
    expect(emulator.apiPublicUrl).toBe(emulator.apiUrl);
    const user = await call(emulator.apiUrl, 'GET', '/users/octocat');
    expect((user.json as { url: string }).url).toBe(`${emulator.apiUrl}/users/octocat`);
  });
});
