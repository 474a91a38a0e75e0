/**
 * Issue 30: every status GitHub's description lists, for every GitHub route the emulator serves. The route table
 * is read from the emulator itself (its GitHub router), each route matched to the description's template, and
 * each status the description lists for it must be either promised by a schema test (`github-route-coverage.ts`;
 * each schema test asserts it checked exactly its promise, answer validated against the description) or named in
 * `UNSERVED_STATUSES` with its reason. A route the description has no path for must be named in
 * `UNDESCRIBED_ROUTES`. No exception may be stale. The test prints the table.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Emulator } from '@longhaul/emulator';
import { documentedStatuses, findTemplate } from '../helpers/github-openapi';
import { PROMISED_CORE, PROMISED_FEEDS_HOOKS, UNSERVED_STATUSES } from '../helpers/github-route-coverage';
import { UNDESCRIBED_ROUTES } from '../helpers/github-schema-ledger';

const PROMISED: Record<string, string[]> = { ...PROMISED_CORE, ...PROMISED_FEEDS_HOOKS };

/** `METHOD template` of each GitHub route the emulator serves (`GET /orgs/:org/migrations/:id` → the description's template). */
function servedRoutes(): { route: string; method: string; template?: string }[] {
  const emulator = new Emulator();
  return emulator
    .service('github')
    .router.routes()
    .map(({ method, pattern }) => {
      const concrete = pattern.replace(/:[A-Za-z_]+/g, 'x1');
      const undescribed = UNDESCRIBED_ROUTES.find((r) => r.method === method && r.path.test(concrete));
      const template = undescribed ? undefined : findTemplate(method, concrete);
      return { route: undescribed?.route ?? `${method} ${template ?? pattern}`, method, template };
    });
}

const rows: string[] = [];

describe("the emulator's GitHub route table against the description", () => {
  const routes = servedRoutes();

  it('matches every served route to a template of the description, or names it as undescribed', () => {
    expect(routes.filter((r) => r.template === undefined && !UNDESCRIBED_ROUTES.some((u) => u.route === r.route)).map((r) => r.route)).toEqual([]);
    expect(new Set(routes.map((r) => r.route)).size).toBe(routes.length);
    for (const u of UNDESCRIBED_ROUTES) expect(routes.map((r) => r.route), u.route).toContain(u.route);
  });

  it('serves and checks every status the description lists for each route, but the named exceptions', () => {
    const missing: string[] = [];
    let listed = 0;
    let served = 0;
    for (const { route, method, template } of routes) {
      const promised = PROMISED[route];
      expect(promised, `${route} is served but no schema test promises it`).toBeDefined();
      const statuses = template ? documentedStatuses(method, template) : [];
      for (const status of statuses) {
        listed++;
        const exception = UNSERVED_STATUSES.find((x) => x.route === route && x.status === status);
        if (promised.includes(status)) served++;
        else if (!exception) missing.push(`${route} ${status}`);
      }
      const marks = statuses.map((s) => (promised.includes(s) ? s : `(${s})`));
      const beyond = promised.filter((s) => !statuses.includes(s));
      rows.push(`  ${route.padEnd(78)} ${marks.join(' ')}${beyond.length ? `  + ${beyond.join(' ')}` : ''}`);
    }
    expect(missing, 'statuses the description lists that no schema test checks and no exception names').toEqual([]);
    rows.unshift(
      `GitHub routes served: ${routes.length}; route × status pairs the description lists for them: ${listed}, served and checked: ${served}, named exceptions: ${UNSERVED_STATUSES.length}`,
      `checked pairs in all (statuses beyond the description's, * = checked against its generic error schema, included): ${Object.values(PROMISED).reduce((n, s) => n + s.length, 0)}`,
      '(status) = listed by the description, not served (see exceptions); + = also checked, beyond what the description lists',
    );
  });

  it('names no stale exception and promises no route the emulator does not serve', () => {
    for (const x of UNSERVED_STATUSES) {
      const served = routes.find((r) => r.route === x.route);
      expect(served, `${x.route}: exception for a route the emulator does not serve`).toBeDefined();
      expect(documentedStatuses(x.route.split(' ')[0], served!.template!), `${x.route} ${x.status}: the description does not list it`).toContain(x.status);
      expect(PROMISED[x.route], `${x.route} ${x.status}: served and checked, so no longer an exception`).not.toContain(x.status);
    }
    expect(Object.keys(PROMISED).filter((route) => !routes.some((r) => r.route === route))).toEqual([]);
  });
});

afterAll(() => {
  // One line per reason, naming the pairs it covers.
  const reasons = [...new Set(UNSERVED_STATUSES.map((x) => x.reason))];
  const exceptions = reasons.map((reason) => `  - ${UNSERVED_STATUSES.filter((x) => x.reason === reason).map((x) => `${x.route} ${x.status}`).join('; ')}: ${reason}`);
  const undescribed = UNDESCRIBED_ROUTES.map((u) => `  - ${u.route}: ${u.reason}`);
  console.log([...rows, 'exceptions (listed, not served):', ...exceptions, 'routes the description has no path for:', ...undescribed].join('\n'));
});
