/** Request checks of the import routes that need no state: URL, VCS, credential pair (422 with GitHub's error shape). */
import { EmulatorHttpError } from '../../http-error';
import { sha256, VCS_TYPES } from './model';

export function checkUrl(value: string, field: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new EmulatorHttpError(422, `Invalid request.\n\n"${field}" must be a URL.`, { errors: [{ resource: 'Import', field, code: 'invalid' }] });
  }
  if (!['http:', 'https:', 'svn:', 'svn+ssh:', 'git:', 'ssh:'].includes(url.protocol)) {
    throw new EmulatorHttpError(422, `Invalid request.\n\n"${field}" has an unsupported scheme ${url.protocol}.`, { errors: [{ resource: 'Import', field, code: 'invalid' }] });
  }
}
export function checkVcs(vcs: unknown): void {
  if (vcs !== undefined && !(VCS_TYPES as readonly string[]).includes(vcs as string)) {
    throw new EmulatorHttpError(422, `Invalid request.\n\n"vcs" must be one of ${VCS_TYPES.join(', ')}, got ${JSON.stringify(vcs)}.`, {
      errors: [{ resource: 'Import', field: 'vcs', code: 'invalid' }],
    });
  }
}
/** Credentials come as a pair: half a pair is a mistake worth a 422, not a silent auth failure. */
export function readCredentials(input: Record<string, unknown>): { username: string; passwordSha256: string } | undefined {
  const username = input.vcs_username as string | undefined;
  const password = input.vcs_password as string | undefined;
  if ((username === undefined) !== (password === undefined)) {
    throw new EmulatorHttpError(422, 'Invalid request.\n\n"vcs_username" and "vcs_password" must be given together.');
  }
  if (username === undefined || password === undefined) return undefined;
  if (username === '' || password === '') throw new EmulatorHttpError(422, 'Invalid request.\n\n"vcs_username" and "vcs_password" must not be empty.');
  return { username, passwordSha256: sha256(password) };
}
