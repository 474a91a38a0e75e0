/**
 * `GET /orgs/{org}/repos` (issue 38): an organization's repositories as GitHub lists them, `minimal-repository`
 * objects, `type` (`all`, `public`, `private` with internal ones, `forks`, `sources`, `member`: every repository
 * for the owner the emulator's token acts as), `sort` (`created`, `updated`, `pushed`, `full_name`) and
 * `direction` (default `asc` for `full_name`, else `desc`), `per_page` ≤ 100 and `page` with GitHub's `Link`
 * header (`next`, `last`, `first`, `prev`). An unknown `type`, `sort` or `direction` is a 422 as on GitHub.
 */
import type { Router } from '../router';
import type { EmulatorContext } from '../module';
import { EmulatorHttpError } from '../http-error';
import type { Repository } from './fixture';
import { accountOr404 } from './lookup';
import { fullRepository } from './repository';
import { paginate } from './pagination';
import { githubFixture } from './service';

const TYPES: Record<string, (r: Repository) => boolean> = {
  all: () => true,
  member: () => true,
  public: (r) => !r.private,
  private: (r) => r.private,
  forks: (r) => r.fork === true,
  sources: (r) => r.fork !== true,
};
const SORTS = ['created', 'updated', 'pushed', 'full_name'];

function oneOf(query: URLSearchParams, name: string, allowed: readonly string[], fallback: string): string {
  const value = query.get(name) ?? fallback;
  if (!allowed.includes(value)) throw new EmulatorHttpError(422, `Invalid request.\n\n${JSON.stringify(value)} is not a member of ${JSON.stringify(allowed)} for ${name}.`);
  return value;
}

export function registerOrgRepositoryRoutes(router: Router, ctx: EmulatorContext): void {
  router.get('/orgs/:org/repos', ({ params, query }) => {
    const fixture = githubFixture(ctx);
    const org = accountOr404(fixture, params.org, 'Organization');
    const type = oneOf(query, 'type', Object.keys(TYPES), 'all');
    const sort = oneOf(query, 'sort', SORTS, 'created');
    const direction = oneOf(query, 'direction', ['asc', 'desc'], sort === 'full_name' ? 'asc' : 'desc');
    const owned = fixture.repositories.filter((r) => r.owner.toLowerCase() === org.login.toLowerCase() && TYPES[type](r));
    // Creation, update and push times all follow the id in the fixture (repository.ts), so they sort alike.
    const key = sort === 'full_name' ? (r: Repository) => r.name.toLowerCase() : (r: Repository) => r.id;
    const sorted = owned.sort((a, b) => {
      const ka = key(a);
      const kb = key(b);
      const order = ka < kb ? -1 : ka > kb ? 1 : 0;
      return direction === 'asc' ? order : -order;
    });
    const page = paginate(sorted, query, `${ctx.apiUrl()}/orgs/${params.org}/repos`);
    return { status: 200, headers: page.headers, body: page.items.map((r) => fullRepository(ctx.apiUrl(), fixture, r)) };
  });
}
