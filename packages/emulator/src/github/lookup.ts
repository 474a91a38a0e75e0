/** Finding fixture accounts and repositories by name (case-insensitive, as GitHub does), or answering 404. */
import { EmulatorHttpError } from '../http-error';
import type { Account, GithubFixture, Repository } from './fixture';

const sameName = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

export function accountOr404(fixture: GithubFixture, login: string, type: Account['type']): Account {
  const a = fixture.accounts.find((x) => x.type === type && sameName(x.login, login));
  if (!a) throw new EmulatorHttpError(404, 'Not Found');
  return a;
}

/** GitHub's answer for a blocked repository, on every route under it: 403 with the block (no documentation link). */
function accessBlocked(r: Repository): EmulatorHttpError {
  return new EmulatorHttpError(403, 'Repository access blocked', { block: { reason: r.blocked!.reason, created_at: r.blocked!.createdAt, html_url: 'https://github.com/tos' } });
}

/** The repository `owner/name`: 404 when there is none (a former name included), 403 when GitHub blocked it. */
export function repositoryOr404(fixture: GithubFixture, owner: string, name: string): Repository {
  const r = fixture.repositories.find((x) => sameName(x.owner, owner) && sameName(x.name, name));
  if (!r) throw new EmulatorHttpError(404, 'Not Found');
  if (r.blocked) throw accessBlocked(r);
  return r;
}

/** The repository with this id (`GET /repositories/{id}`, where a rename's redirect leads), or 404; 403 when blocked. */
export function repositoryByIdOr404(fixture: GithubFixture, idText: string): Repository {
  const r = /^\d+$/.test(idText) ? fixture.repositories.find((x) => x.id === Number(idText)) : undefined;
  if (!r) throw new EmulatorHttpError(404, 'Not Found');
  if (r.blocked) throw accessBlocked(r);
  return r;
}

/**
 * The repository a former name leads to (a rename or transfer record), when no repository has that name now
 * (GitHub gives the name to a new repository over the redirect).
 */
export function renamedRepository(fixture: GithubFixture, owner: string, name: string): Repository | undefined {
  if (fixture.repositories.some((x) => sameName(x.owner, owner) && sameName(x.name, name))) return undefined;
  const rename = fixture.renames?.find((x) => sameName(x.owner, owner) && sameName(x.name, name));
  return rename && fixture.repositories.find((x) => x.id === rename.repositoryId);
}

/**
 * GitHub's answer for a former repository name on a route that documents it: 301, `Location` the repository's
 * lasting address, and the same URL in a `basic-error` body (`message`, `url`), as api.github.com sends it.
 */
export function movedPermanently(location: string): EmulatorHttpError {
  return new EmulatorHttpError(301, 'Moved Permanently', { url: location, documentation_url: 'https://docs.github.com/v3/#http-redirects' }, { location });
}
