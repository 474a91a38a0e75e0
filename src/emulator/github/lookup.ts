/** Finding fixture accounts and repositories by name (case-insensitive, as GitHub does), or answering 404. */
import { EmulatorHttpError } from '../http-error';
import type { Account, GithubFixture, Repository } from './fixture';

export function accountOr404(fixture: GithubFixture, login: string, type: Account['type']): Account {
  const a = fixture.accounts.find((x) => x.type === type && x.login.toLowerCase() === login.toLowerCase());
  if (!a) throw new EmulatorHttpError(404, 'Not Found');
  return a;
}

export function repositoryOr404(fixture: GithubFixture, owner: string, name: string): Repository {
  const r = fixture.repositories.find((x) => x.owner.toLowerCase() === owner.toLowerCase() && x.name.toLowerCase() === name.toLowerCase());
  if (!r) throw new EmulatorHttpError(404, 'Not Found');
  return r;
}
