/**
 * Organization migrations (spec 002): export state machine pending → exporting → exported | failed on
 * configurable timing, repository locks, and archives served through a 302 to the storage origin.
 *
 * State advances lazily from the emulator clock (no timers), so tests with an injected clock are exact.
 */
import { randomUUID } from 'node:crypto';
import type { Router, RouteResult } from '../router';
import { refill, type Durable, type EmulatorContext } from '../module';
import { apiVersionOf, githubFixture } from './service';
import { migrationRepository, type ApiVersion } from './api-version';
import { EmulatorHttpError } from '../http-error';
import { conditionalJson, NOT_MODIFIED_NOT_COUNTED } from '../conditional';
import * as v from 'valibot';
import { flag, given, requestBody, texts, validateBody } from '../validation';
import { accountObject, type Repository } from './fixture';
import { accountOr404 } from './lookup';
import { fullRepository } from './repository';
import { paginate } from './pagination';
import { contentBytes, generatedArchive } from '../storage/archive-content';

export type MigrationState = 'pending' | 'exporting' | 'exported' | 'failed';

export interface MigrationOptions {
  /** How long an export takes: fixed, or a range picked per migration. @format milliseconds */
  exportMs: number | [number, number];
  /** Fraction of the export time spent in `pending`. */
  pendingFraction: number;
  /** Exports that include any of these repositories end `failed`. */
  failRepositories: string[];
  /** Size of each generated archive. */
  archiveBytes: number;
  /** Lifetime of a pre-signed archive URL. @format milliseconds */
  archiveUrlTtlMs: number;
  /** Archives are deleted automatically after this long (7 days on the real service). @format milliseconds */
  archiveRetentionMs: number;
}

export const defaultMigrationOptions: MigrationOptions = {
  exportMs: [2_000, 6_000],
  pendingFraction: 0.2,
  failRepositories: [],
  archiveBytes: 512 * 1024,
  archiveUrlTtlMs: 5 * 60 * 1000,
  archiveRetentionMs: 7 * 24 * 60 * 60 * 1000,
};

export interface EmulatedMigration {
  id: number;
  guid: string;
  org: string;
  repositories: Repository[];
  flags: Record<string, boolean>;
  exclude: string[];
  createdAt: number;
  exportMs: number;
  willFail: boolean;
  archiveDeleted: boolean;
  /** Repositories still locked by this migration. */
  locked: Set<string>;
}

const FLAGS = ['lock_repositories', 'exclude_metadata', 'exclude_git_data', 'exclude_attachments', 'exclude_releases', 'exclude_owner_projects', 'org_metadata_only'] as const;

/** `POST /orgs/{org}/migrations`. */
const START_BODY = requestBody({
  repositories: given(texts()),
  ...(Object.fromEntries(FLAGS.map((f) => [f, v.optional(flag())])) as Record<(typeof FLAGS)[number], v.OptionalSchema<ReturnType<typeof flag>, undefined>>),
  exclude: v.optional(texts()),
});

export function registerMigrationRoutes(router: Router, ctx: EmulatorContext, options: MigrationOptions) {
  const fixture = githubFixture(ctx);
  const migrations = new Map<number, EmulatedMigration>();
  let nextId = 79;

  const orgAccount = (org: string) => accountOr404(fixture, org, 'Organization');

  const stateOf = (m: EmulatedMigration, now: number): MigrationState => {
    const elapsed = now - m.createdAt;
    if (elapsed < m.exportMs * options.pendingFraction) return 'pending';
    if (elapsed < m.exportMs) return 'exporting';
    return m.willFail ? 'failed' : 'exported';
  };

  const archiveKey = (m: EmulatedMigration) => `migrations/${m.id}/${m.guid}.tar.gz`;

  // Deterministic content, generated on demand (never held in memory): checkable by SHA-256 at any size.
  const archiveContent = (m: EmulatedMigration) => generatedArchive(m.guid, options.archiveBytes);

  const pickExportMs = (id: number) => {
    if (typeof options.exportMs === 'number') return options.exportMs;
    const [min, max] = options.exportMs;
    // Spread deterministically across the range by id.
    const fraction = ((id * 2654435761) % 1000) / 999;
    return Math.round(min + (max - min) * fraction);
  };

  // A migration's repositories: `repository` under 2022-11-28, `simple-repository` (name, full_name, owner, links) under 2026-03-10.
  const repoObject = (repo: Repository, version: ApiVersion) => migrationRepository(fullRepository(ctx.apiUrl(), fixture, repo), version);

  const migrationObject = (m: EmulatedMigration, now: number, version: ApiVersion) => {
    const base = ctx.apiUrl();
    const state = stateOf(m, now);
    const object: Record<string, unknown> = {
      id: m.id,
      node_id: Buffer.from(`09:Migration${m.id}`).toString('base64'),
      owner: accountObject(base, orgAccount(m.org)),
      guid: m.guid,
      state,
      lock_repositories: m.flags.lock_repositories ?? false,
      exclude_metadata: m.flags.exclude_metadata ?? false,
      exclude_git_data: m.flags.exclude_git_data ?? false,
      exclude_attachments: m.flags.exclude_attachments ?? false,
      exclude_releases: m.flags.exclude_releases ?? false,
      exclude_owner_projects: m.flags.exclude_owner_projects ?? false,
      org_metadata_only: m.flags.org_metadata_only ?? false,
      repositories: m.repositories.map((r) => repoObject(r, version)),
      url: `${base}/orgs/${m.org}/migrations/${m.id}`,
      archive_url: state === 'exported' ? `${base}/orgs/${m.org}/migrations/${m.id}/archive` : undefined,
      exclude: m.exclude,
      created_at: new Date(m.createdAt).toISOString(),
      updated_at: new Date(m.createdAt + (state === 'exported' || state === 'failed' ? m.exportMs : 0)).toISOString(),
    };
    if (m.exclude.includes('repositories')) delete object.repositories;
    return object;
  };

  const find = (org: string, idText: string): EmulatedMigration => {
    orgAccount(org);
    const m = /^\d+$/.test(idText) ? migrations.get(Number(idText)) : undefined;
    if (!m || m.org.toLowerCase() !== org.toLowerCase()) throw new EmulatorHttpError(404, 'Not Found');
    return m;
  };

  /** Which migration holds a lock on `org/repo`, if any. */
  const lockHolder = (org: string, repo: string): EmulatedMigration | undefined => {
    for (const m of migrations.values()) if (m.org.toLowerCase() === org.toLowerCase() && m.locked.has(repo)) return m;
    return undefined;
  };

  router.post('/orgs/:org/migrations', (rc): RouteResult => {
    const { params, body, now } = rc;
    const account = orgAccount(params.org);
    const input = validateBody(body, START_BODY);
    const names = input.repositories;
    const metadataOnly = input.org_metadata_only === true;
    if (!metadataOnly && names.length === 0) throw new EmulatorHttpError(422, 'Invalid request.\n\n"repositories" must not be empty unless "org_metadata_only" is true.');
    const repositories = metadataOnly
      ? []
      : names.map((name) => {
          const short = name.includes('/') ? name.split('/')[1] : name;
          const repo = fixture.repositories.find((r) => r.owner.toLowerCase() === account.login.toLowerCase() && r.name.toLowerCase() === short.toLowerCase());
          if (!repo) throw new EmulatorHttpError(422, `Repository ${account.login}/${short} could not be found.`, { errors: [{ resource: 'Migration', field: 'repositories', code: 'invalid' }] });
          return repo;
        });
    const lock = input.lock_repositories === true && !metadataOnly;
    if (lock) {
      for (const repo of repositories) {
        if (lockHolder(account.login, repo.name)) throw new EmulatorHttpError(422, `Repository ${account.login}/${repo.name} is already locked by another migration.`);
      }
    }
    const id = nextId++;
    const flags: Record<string, boolean> = {};
    for (const f of FLAGS) if (typeof input[f] === 'boolean') flags[f] = input[f];
    const m: EmulatedMigration = {
      id,
      guid: randomUUID(),
      org: account.login,
      repositories,
      flags,
      exclude: input.exclude ?? [],
      createdAt: now,
      exportMs: pickExportMs(id),
      willFail: repositories.some((r) => options.failRepositories.includes(r.name)),
      archiveDeleted: false,
      locked: new Set(lock ? repositories.map((r) => r.name) : []),
    };
    migrations.set(id, m);
    ctx.storage.put(archiveKey(m), { bytes: archiveContent(m), contentType: 'application/x-gzip' });
    return { status: 201, body: migrationObject(m, now, apiVersionOf(rc)) };
  });

  router.get('/orgs/:org/migrations', (rc) => {
    const { params, query, now } = rc;
    orgAccount(params.org);
    const all = [...migrations.values()].filter((m) => m.org.toLowerCase() === params.org.toLowerCase()).sort((a, b) => b.id - a.id);
    const exclude = query.getAll('exclude').concat(query.getAll('exclude[]'));
    const page = paginate(all, query, `${ctx.apiUrl()}/orgs/${params.org}/migrations`);
    return {
      status: 200,
      headers: page.headers,
      body: page.items.map((m) => {
        const object = migrationObject(m, now, apiVersionOf(rc));
        if (exclude.includes('repositories')) delete object.repositories;
        return object;
      }),
    };
  });

  // The status poll: conditional (ETag of the body, 304 not counted), as on GitHub.
  router.get(
    '/orgs/:org/migrations/:id',
    (rc) => {
      const m = find(rc.params.org, rc.params.id);
      const object = migrationObject(m, rc.now, apiVersionOf(rc));
      if (rc.query.getAll('exclude').concat(rc.query.getAll('exclude[]')).includes('repositories')) delete object.repositories;
      return conditionalJson(rc, object);
    },
    NOT_MODIFIED_NOT_COUNTED,
  );

  router.get('/orgs/:org/migrations/:id/repositories', (rc) => {
    const { params, query } = rc;
    const m = find(params.org, params.id);
    const page = paginate(m.repositories, query, `${ctx.apiUrl()}/orgs/${params.org}/migrations/${m.id}/repositories`);
    return { status: 200, headers: page.headers, body: page.items.map((r) => repoObject(r, apiVersionOf(rc))) };
  });

  router.get('/orgs/:org/migrations/:id/archive', ({ params, now }) => {
    const m = find(params.org, params.id);
    if (stateOf(m, now) !== 'exported') throw new EmulatorHttpError(404, 'Not Found');
    if (m.archiveDeleted || now - m.createdAt - m.exportMs > options.archiveRetentionMs) throw new EmulatorHttpError(404, 'Not Found');
    // GitHub sends the URL in `Location` and as the body (PyGithub's `get_archive_url` reads the body).
    const url = ctx.storage.presign(archiveKey(m), options.archiveUrlTtlMs);
    return { status: 302, headers: { location: url, 'content-type': 'text/plain; charset=utf-8' }, raw: Buffer.from(url) };
  });

  router.delete('/orgs/:org/migrations/:id/archive', ({ params, now }) => {
    const m = find(params.org, params.id);
    if (stateOf(m, now) !== 'exported' || m.archiveDeleted) throw new EmulatorHttpError(404, 'Not Found');
    m.archiveDeleted = true;
    ctx.storage.delete(archiveKey(m));
    return { status: 204 };
  });

  router.delete('/orgs/:org/migrations/:id/repos/:repo/lock', ({ params }) => {
    const m = find(params.org, params.id);
    const repo = m.repositories.find((r) => r.name.toLowerCase() === params.repo.toLowerCase());
    if (!repo) throw new EmulatorHttpError(404, 'Not Found');
    // Unlocking an already unlocked repository of this migration succeeds: retries after a lost response are safe.
    m.locked.delete(repo.name);
    return { status: 204 };
  });

  return {
    all: () => [...migrations.values()],
    get: (id: number) => migrations.get(id),
    stateOf: (id: number) => {
      const m = migrations.get(id);
      return m ? stateOf(m, ctx.clock()) : undefined;
    },
    isLocked: (org: string, repo: string) => lockHolder(org, repo) !== undefined,
    /** A fresh pre-signed storage URL for a migration's archive. */
    archiveUrl: (id: number) => {
      const m = migrations.get(id);
      return m ? ctx.storage.presign(archiveKey(m), options.archiveUrlTtlMs) : undefined;
    },
    archiveBytes: (id: number) => {
      const m = migrations.get(id);
      return m ? contentBytes(archiveContent(m)) : undefined;
    },
    options,
    durable: {
      snapshot: () => ({ nextId, migrations }),
      restore(saved) {
        nextId = saved.nextId;
        refill(migrations, saved.migrations);
      },
    } satisfies Durable<{ nextId: number; migrations: typeof migrations }>,
  };
}
