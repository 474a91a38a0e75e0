/**
 * The emulator as modules: an API family defined here, outside `src/`, is served by passing it in the
 * module list — its routes over real HTTP under its own service, its options under its name merged over
 * its defaults, its state under its name — beside the default families, which keep working.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Emulator, type EmulatorOptions } from '@longhaul/emulator';
import { defineModule, type AnyModule } from '../../../packages/emulator/src/module';
import { defaultModules, type DefaultModule } from '../../../packages/emulator/src/modules';
import { githubFixture, githubService } from '../../../packages/emulator/src/github/service';
import { EmulatorHttpError } from '../../../packages/emulator/src/http-error';
import { call, messageOf } from '../../helpers/emulator-http';
import { TEST_TOKEN } from '../../helpers/emulator';

/** A tiny family on its own service: greets, counts greetings, remembers who was greeted. */
const greetings = defineModule({
  name: 'greetings',
  service: { name: 'greetings', prefix: '/greetings', errorStyle: 'google' },
  defaults: { word: 'hello', style: { mark: '!', repeat: 1 }, greeted: [] as string[] },
  register(router, ctx, options) {
    let count = 0;
    router.get('/v1/:name', ({ params }) => {
      if (params.name === 'nobody') throw new EmulatorHttpError(404, `no one called ${params.name}`);
      count++;
      options.greeted.push(params.name);
      return { status: 200, body: { text: `${options.word} ${params.name}${options.style.mark.repeat(options.style.repeat)}`, at: ctx.clock() } };
    });
    return { options, count: () => count };
  },
});

/** A family that mounts on the GitHub service: rate-limited, GitHub errors, the shared fixture. */
const orgNotes = defineModule({
  name: 'orgNotes',
  service: githubService,
  defaults: {},
  register(router, ctx) {
    const notes = new Map<string, string>();
    router.put('/orgs/:org/note', ({ params, body }) => {
      if (!githubFixture(ctx).accounts.some((a) => a.type === 'Organization' && a.login === params.org)) throw new EmulatorHttpError(404, 'Not Found');
      notes.set(params.org, String((body as { text?: unknown }).text));
      return { status: 204 };
    });
    return { note: (org: string) => notes.get(org) };
  },
});

const started: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((e) => e.close()));
});

async function start<M extends AnyModule = DefaultModule>(options: EmulatorOptions<M>): Promise<Emulator<M>> {
  const emulator = await new Emulator<M>({ token: TEST_TOKEN, ...options }).listen();
  started.push(emulator);
  return emulator;
}

describe('the emulator as modules', () => {
  it('serves a family passed in the module list, with its options and state under its name', async () => {
    const e = await start({ modules: [...defaultModules, greetings], greetings: { word: 'hi', style: { repeat: 3 } }, clock: () => 1_000 });

    const res = await call(e.serviceUrl('greetings'), 'GET', '/greetings/v1/octocat');
    expect(res.status).toBe(200);
    // `word` given, `style.mark` from the defaults (merged one level deep), `style.repeat` given.
    expect(res.json).toEqual({ text: 'hi octocat!!!', at: 1_000 });
    expect(e.greetings.count()).toBe(1);
    expect(e.state.greetings.options.greeted).toEqual(['octocat']);

    // Its service answers in its own error style, behind the same auth rule and accounting.
    const missing = await call(e.apiUrl, 'GET', '/greetings/v1/nobody');
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ error: { code: 404, status: 'NOT_FOUND', message: 'no one called nobody' } });
    expect((await call(e.apiUrl, 'GET', '/greetings/v1/octocat', { token: 'wrong' })).status).toBe(401);
    expect(e.stats.byRoute['GET /greetings/v1/:name']).toBe(3);

    // The default families are still there.
    expect((await call(e.apiUrl, 'GET', '/orgs/octo-org/migrations')).status).toBe(200);
    expect(e.migrations.all()).toEqual([]);
  });

  it('gives each emulator its own copy of a module’s options, defaults untouched', async () => {
    const first = await start({ modules: [greetings] });
    await call(first.apiUrl, 'GET', '/greetings/v1/alice');
    expect(first.greetings.options.greeted).toEqual(['alice']);

    const second = await start({ modules: [greetings] });
    expect(second.greetings.options).toEqual({ word: 'hello', style: { mark: '!', repeat: 1 }, greeted: [] });
    expect(greetings.defaults.greeted).toEqual([]);
    expect((await call(second.apiUrl, 'GET', '/greetings/v1/bob')).json).toMatchObject({ text: 'hello bob!' });
    // Without a root service, a path under no service's prefix is a plain 404.
    expect((await call(second.apiUrl, 'GET', '/orgs/octo-org/migrations')).status).toBe(404);

    // The same for the default families: a test making one emulator's migrations fail leaves the next alone.
    const third = await start({});
    third.migrations.options.failRepositories.push('gamma');
    const fourth = await start({ migrations: { archiveBytes: 1_024 } });
    expect(fourth.migrations.options.failRepositories).toEqual([]);
    expect(fourth.migrations.options.archiveBytes).toBe(1_024);
    expect(third.migrations.options.archiveBytes).toBe(512 * 1024);
  });

  it('mounts a module on the GitHub service: GitHub errors, rate limits, the fixture the GitHub family shares', async () => {
    const fixture = { accounts: [{ id: 7, login: 'notes-org', type: 'Organization' as const }], repositories: [] };
    const e = await start({ modules: [...defaultModules, orgNotes], fixture });

    const put = await call(e.apiUrl, 'PUT', '/orgs/notes-org/note', { body: { text: 'remember' } });
    expect(put.status).toBe(204);
    expect(put.headers['x-ratelimit-limit']).toBeDefined();
    expect(e.orgNotes.note('notes-org')).toBe('remember');
    // The default fixture's organization is not in the given fixture, for this module as for migrations.
    const unknown = await call(e.apiUrl, 'PUT', '/orgs/octo-org/note', { body: { text: 'x' } });
    expect(unknown.status).toBe(404);
    expect(messageOf(unknown)).toBe('Not Found');
    expect((await call(e.apiUrl, 'POST', '/orgs/octo-org/migrations', { body: { repositories: [] } })).status).toBe(404);
    // And the GitHub service's query check applies to it.
    expect((await call(e.apiUrl, 'PUT', '/orgs/notes-org/note?per_page=0', { body: { text: 'x' } })).status).toBe(422);
  });

  it('refuses a module whose name is taken by another module or by the emulator itself', () => {
    expect(() => new Emulator({ modules: [...defaultModules, { ...greetings, name: 'migrations' as const }] })).toThrow(/'migrations' is already taken/);
    expect(() => new Emulator({ modules: [{ ...greetings, name: 'stats' as const }] })).toThrow(/'stats' is already taken/);
  });
});
