/**
 * The source-import endpoints (spec 002, "Source import" and "Import status") over the state machine of
 * `machine.ts`: each route checks the request, patches the stored facts and answers with the import as it is now.
 */
import { randomUUID } from 'node:crypto';
import type { Router, RouteResult } from '../../router';
import type { EmulatorContext } from '../../module';
import { githubFixture } from '../service';
import { repositoryOr404 } from '../lookup';
import { EmulatorHttpError } from '../../http-error';
import { conditionalJson, NOT_MODIFIED_NOT_COUNTED } from '../../conditional';
import * as v from 'valibot';
import { given, requestBody, text, validateBody } from '../../validation';
import { checkUrl, checkVcs, readCredentials } from './checks';
import { createImportMachine } from './machine';
import { PROJECT_CHOICES, scenarioOf, sha256, type EmulatedImport, type ImportOptions, type ImportStatus, type PushedResult } from './model';

export { defaultImportOptions, type ImportOptions } from './model';

export function registerImportRoutes(router: Router, ctx: EmulatorContext, options: ImportOptions) {
  const fixture = githubFixture(ctx);
  const { imports, history, key, durationOf, advance, enterStep, resume, statusOf, importObject, authorObject, rewriteIfPushed, durable } = createImportMachine(ctx, options);

  const inMaintenance = (now: number) => options.maintenanceWindows.some((w) => now >= w.fromMs && now < w.untilMs);

  /** Checks shared by every import route: retired, maintenance, repository exists. */
  const guard = (owner: string, repo: string, now: number) => {
    if (options.retired) throw new EmulatorHttpError(404, 'Not Found');
    if (inMaintenance(now)) {
      const headers: Record<string, string> =
        options.maintenanceRetryAfterSeconds !== undefined ? { 'retry-after': String(options.maintenanceRetryAfterSeconds) } : {};
      throw new EmulatorHttpError(503, 'Service Unavailable: source imports are under maintenance.', {}, headers);
    }
    return repositoryOr404(fixture, owner, repo);
  };

  const current = (owner: string, repo: string): EmulatedImport => {
    const imp = imports.get(key(owner, repo));
    if (!imp) throw new EmulatorHttpError(404, 'Not Found');
    return imp;
  };

  router.put(
    '/repos/:owner/:repo/import',
    ({ params, body, now }): RouteResult => {
      const repository = guard(params.owner, params.repo, now);
      const input = validateBody(
        body,
        requestBody({ vcs_url: given(text()), vcs: v.optional(text()), vcs_username: v.optional(text()), vcs_password: v.optional(text()), tfvc_project: v.optional(text()) }),
      );
      const vcsUrl = input.vcs_url;
      checkUrl(vcsUrl, 'vcs_url');
      checkVcs(input.vcs);
      if (input.tfvc_project !== undefined && input.vcs !== undefined && input.vcs !== 'tfvc') {
        throw new EmulatorHttpError(422, 'Invalid request.\n\n"tfvc_project" applies only to "vcs": "tfvc".');
      }
      const credentials = readCredentials(input);
      if (repository.workflowsEnabled) {
        throw new EmulatorHttpError(422, `Starting an import into ${repository.owner}/${repository.name} is not supported: the repository has workflows enabled.`, {
          errors: [{ resource: 'Import', field: 'repository', code: 'workflows_enabled' }],
        });
      }
      const existing = imports.get(key(repository.owner, repository.name));
      if (existing) {
        // The same import asked for again (a retry after a lost answer) gets the import that exists.
        if (existing.vcsUrl === vcsUrl && existing.step !== 'complete') return { status: 201, body: importObject(existing, now) };
        throw new EmulatorHttpError(422, `An import into ${repository.owner}/${repository.name} already exists (from ${existing.vcsUrl}); cancel it first.`, {
          errors: [{ resource: 'Import', field: 'vcs_url', code: 'already_exists' }],
        });
      }
      const { scenario, errorStep, failTimes } = scenarioOf(vcsUrl);
      const imp: EmulatedImport = {
        guid: randomUUID(),
        owner: repository.owner,
        repo: repository.name,
        repositoryId: repository.id,
        vcsUrl,
        scenario,
        errorStep,
        errorsLeft: scenario === 'error' ? (failTimes ?? options.errorTimes) : 0,
        vcs: input.vcs as string | undefined,
        tfvcProject: input.tfvc_project as string | undefined,
        credentials,
        createdAt: now,
        step: 'detecting',
        stepStartedAt: now,
        authors: [],
        authorsRevealed: 0,
        largeFilesFound: false,
        useLfs: 'undecided',
        pushes: [],
        restarts: 0,
        events: [{ at: now, kind: 'put' }],
      };
      // With a VCS given, detection is skipped.
      enterStep(imp, imp.vcs === undefined ? 'detecting' : 'importing', now);
      imports.set(key(imp.owner, imp.repo), imp);
      history.push(imp);
      return { status: 201, body: importObject(imp, now) };
    },
    { contentCreating: true },
  );

  // The status poll: conditional (ETag of the body, 304 not counted), as on GitHub.
  router.get(
    '/repos/:owner/:repo/import',
    (rc) => {
      guard(rc.params.owner, rc.params.repo, rc.now);
      return conditionalJson(rc, importObject(current(rc.params.owner, rc.params.repo), rc.now));
    },
    NOT_MODIFIED_NOT_COUNTED,
  );

  router.patch('/repos/:owner/:repo/import', ({ params, body, now }) => {
    guard(params.owner, params.repo, now);
    const imp = current(params.owner, params.repo);
    const input = validateBody(
      body,
      requestBody({ vcs_username: v.optional(text()), vcs_password: v.optional(text()), vcs: v.optional(text()), tfvc_project: v.optional(text()), human_name: v.optional(text()) }),
    );
    checkVcs(input.vcs);
    advance(imp, now);
    const credentials = readCredentials(input);
    const choosing = input.vcs !== undefined || input.tfvc_project !== undefined || input.human_name !== undefined;
    const status = statusOf(imp);

    if (credentials) {
      imp.credentials = credentials;
      imp.events.push({ at: now, kind: 'patch:credentials' });
    }
    if (choosing) {
      if (status === 'detection_found_multiple') {
        const matching = PROJECT_CHOICES.filter(
          (c) =>
            (input.vcs === undefined || c.vcs === input.vcs) &&
            (input.tfvc_project === undefined || c.tfvc_project === input.tfvc_project) &&
            (input.human_name === undefined || c.human_name === input.human_name),
        );
        const choice = matching.length === 1 ? matching[0] : undefined;
        if (!choice) {
          throw new EmulatorHttpError(422, 'Invalid request.\n\nThe project choice must be one of "project_choices".', {
            errors: [{ resource: 'Import', field: 'project_choices', code: 'invalid' }],
          });
        }
        imp.chosenProject = choice;
        imp.vcs = choice.vcs;
        imp.tfvcProject = choice.tfvc_project;
        imp.events.push({ at: now, kind: 'patch:choice' });
        resume(imp, 'importing', now);
      } else {
        if (input.vcs !== undefined) imp.vcs = input.vcs as string;
        if (input.tfvc_project !== undefined) imp.tfvcProject = input.tfvc_project as string;
        imp.events.push({ at: now, kind: 'patch:vcs' });
        resume(imp, 'importing', now);
      }
    } else if (credentials) {
      if (status === 'detection_needs_auth') resume(imp, 'detecting', now);
      else if (status === 'auth_failed') resume(imp, 'importing', now);
    } else {
      // No parameters: restart. An import in `error` resumes at the step that failed.
      imp.restarts++;
      imp.events.push({ at: now, kind: 'patch:restart' });
      if (imp.blocked?.status === 'error') resume(imp, imp.blocked.step, now);
      else if (imp.step !== 'complete' || imp.blocked) resume(imp, imp.vcs === undefined ? 'detecting' : 'importing', now);
    }
    return { status: 200, body: importObject(imp, now) };
  });

  router.delete('/repos/:owner/:repo/import', ({ params, now }) => {
    guard(params.owner, params.repo, now);
    const imp = current(params.owner, params.repo);
    imp.deletedAt = now;
    imp.events.push({ at: now, kind: 'delete' });
    imports.delete(key(imp.owner, imp.repo));
    return { status: 204 };
  });

  router.get('/repos/:owner/:repo/import/authors', ({ params, query, now }) => {
    guard(params.owner, params.repo, now);
    const imp = current(params.owner, params.repo);
    const sinceText = query.get('since');
    if (sinceText !== null && !/^\d+$/.test(sinceText)) {
      throw new EmulatorHttpError(422, `Invalid request.\n\n"since" must be a non-negative integer, got ${JSON.stringify(sinceText)}.`);
    }
    advance(imp, now);
    const since = sinceText === null ? 0 : Number(sinceText);
    const page = imp.authors.filter((a) => a.id > since).slice(0, options.authorsPageSize);
    return { status: 200, body: page.map((a) => authorObject(imp, a)) };
  });

  router.patch('/repos/:owner/:repo/import/authors/:authorId', ({ params, body, now }) => {
    guard(params.owner, params.repo, now);
    const imp = current(params.owner, params.repo);
    advance(imp, now);
    const author = /^\d+$/.test(params.authorId) ? imp.authors.find((a) => a.id === Number(params.authorId)) : undefined;
    if (!author) throw new EmulatorHttpError(404, 'Not Found');
    const input = validateBody(body, requestBody({ email: v.optional(text()), name: v.optional(text()) }));
    if (input.email === undefined && input.name === undefined) throw new EmulatorHttpError(422, 'Invalid request.\n\nGive "email", "name" or both.');
    if (input.email !== undefined && !/^[^\s@<>]+@[^\s@<>]+$/.test(input.email as string)) {
      throw new EmulatorHttpError(422, `Invalid request.\n\n"email" ${JSON.stringify(input.email)} is not an email address.`, {
        errors: [{ resource: 'PorterAuthor', field: 'email', code: 'invalid' }],
      });
    }
    if (input.name !== undefined && ((input.name as string).trim() === '' || /[<>\n]/.test(input.name as string))) {
      throw new EmulatorHttpError(422, 'Invalid request.\n\n"name" must be a non-empty name without <, > or line breaks.', {
        errors: [{ resource: 'PorterAuthor', field: 'name', code: 'invalid' }],
      });
    }
    if (input.email !== undefined) author.email = input.email as string;
    if (input.name !== undefined) author.name = input.name as string;
    imp.events.push({ at: now, kind: 'patch:author' });
    rewriteIfPushed(imp, now);
    return { status: 200, body: authorObject(imp, author) };
  });

  router.get('/repos/:owner/:repo/import/large_files', ({ params, now }) => {
    guard(params.owner, params.repo, now);
    const imp = current(params.owner, params.repo);
    advance(imp, now);
    const files = imp.largeFilesFound ? options.largeFiles : [];
    return {
      status: 200,
      body: files.map((f) => ({ ref_name: f.refName, path: f.path, oid: sha256(`${imp.guid}:${f.path}`).slice(0, 40), size: f.size })),
    };
  });

  router.patch('/repos/:owner/:repo/import/lfs', ({ params, body, now }) => {
    guard(params.owner, params.repo, now);
    const imp = current(params.owner, params.repo);
    const input = validateBody(body, requestBody({ use_lfs: given(text()) }));
    if (input.use_lfs !== 'opt_in' && input.use_lfs !== 'opt_out') {
      throw new EmulatorHttpError(422, `Invalid request.\n\n"use_lfs" must be "opt_in" or "opt_out", got ${JSON.stringify(input.use_lfs)}.`, {
        errors: [{ resource: 'Import', field: 'use_lfs', code: 'invalid' }],
      });
    }
    advance(imp, now);
    const changed = imp.useLfs !== input.use_lfs;
    imp.useLfs = input.use_lfs;
    imp.events.push({ at: now, kind: 'patch:lfs' });
    const held = !imp.blocked && imp.step === 'mapping' && imp.largeFilesFound && now >= imp.stepStartedAt + durationOf('mapping');
    if (held) enterStep(imp, 'pushing', now);
    else if (changed && imp.largeFilesFound) rewriteIfPushed(imp, now);
    return { status: 200, body: importObject(imp, now) };
  });

  const find = (owner: string, repo: string) => {
    const imp = imports.get(key(owner, repo));
    if (imp) advance(imp, ctx.clock());
    return imp;
  };

  return {
    /** The current import into `owner/repo` (advanced to now), if any. */
    get: find,
    /** Every import ever started, deleted ones included. */
    all: () => [...history],
    status: (owner: string, repo: string): ImportStatus | undefined => {
      const imp = find(owner, repo);
      return imp ? statusOf(imp) : undefined;
    },
    /** What each push wrote (author identities, LFS objects, removed files), oldest first. */
    pushes: (owner: string, repo: string): PushedResult[] =>
      find(owner, repo)?.pushes ?? history.filter((i) => key(i.owner, i.repo) === key(owner, repo)).at(-1)?.pushes ?? [],
    /** Starts a maintenance window of `durationMs` now (every import endpoint answers 503). */
    startMaintenance: (durationMs: number) => {
      const fromMs = ctx.clock();
      options.maintenanceWindows.push({ fromMs, untilMs: fromMs + durationMs });
    },
    options,
    durable,
  };
}
