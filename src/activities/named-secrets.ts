/**
 * Secrets that workflow inputs *name* and the workers hold, besides the GitHub credentials (`config.ts`): source-
 * import credentials and feed sinks' signing secrets. The operator lists the names and gives each its value in
 * the environment (or a file named by the `_FILE` variable, Docker/Kubernetes secrets); an input carries the name
 * only, so a caller can choose among what the operator configured and nothing else. Read at call time, as every
 * credential is: a rotated file is read by the next call.
 *
 * - import credentials: `LONGHAUL_IMPORT_CREDENTIALS=svn-main,tfs`, then `LONGHAUL_IMPORT_SVN_MAIN_USERNAME` and
 *   `LONGHAUL_IMPORT_SVN_MAIN_PASSWORD` (each or its `_FILE`);
 * - sink secrets: `default` is always configured and reads `LONGHAUL_SINK_SECRET` (or `_FILE`), the variable every
 *   release has read; more by `LONGHAUL_SINK_SECRETS=hooks`, then `LONGHAUL_SINK_HOOKS_SECRET` (or `_FILE`).
 *
 * Failures name the credential and the variables, never a value.
 */
import { ApplicationFailure } from '@temporalio/common';
import { readSecret } from '../config';
import {
  CredentialFailure,
  credentialReferenceRefused,
  DEFAULT_SINK_SECRET,
  DEFAULT_SINK_SECRET_VARIABLE,
  IMPORT_CREDENTIALS_SETTING,
  isCredentialReference,
  SINK_SECRETS_SETTING,
} from '../common/credential';
import { readVariable } from '../settings';



/** `svn-main` → `SVN_MAIN`: a name as a part of a variable's name. */
const variablePart = (name: string) => name.toUpperCase().replace(/[^A-Z0-9]/g, '_');

/** The names a setting lists (`a, b`), in order, without repeats. */
export function configuredNames(setting: string, env: NodeJS.ProcessEnv = process.env): string[] {
  return [...new Set((readVariable(setting, env) ?? '').split(',').map((n) => n.trim()).filter(Boolean))];
}

function listed(names: readonly string[], setting: string): string {
  return names.length > 0 ? names.join(', ') : `none: set ${setting}`;
}

/** The variables of an import credential (`LONGHAUL_IMPORT_<NAME>_USERNAME`, `…_PASSWORD`). */
export function importCredentialVariables(name: string): { username: string; password: string } {
  const prefix = `LONGHAUL_IMPORT_${variablePart(name)}_`;
  return { username: `${prefix}USERNAME`, password: `${prefix}PASSWORD` };
}

function readNamed(variable: string, env: NodeJS.ProcessEnv, what: string): string | undefined {
  try {
    return readSecret(variable, env);
  } catch (err) {
    throw ApplicationFailure.nonRetryable(`${what}: ${variable}_FILE could not be read on the worker (${(err as NodeJS.ErrnoException).code ?? 'error'})`, CredentialFailure.Unreadable);
  }
}

/**
 * The username and password of the import credential `name`: `UnknownCredential` (listing the configured names)
 * when the workers have none of that name, `CredentialReferenceError` when it is listed but a value is missing.
 */
export function importCredential(name: string, env: NodeJS.ProcessEnv = process.env): { username: string; password: string } {
  if (isCredentialReference(name)) throw credentialReferenceRefused('credentials', IMPORT_CREDENTIALS_SETTING);
  const names = configuredNames(IMPORT_CREDENTIALS_SETTING, env);
  if (!names.includes(name)) {
    throw ApplicationFailure.nonRetryable(
      // The name is not echoed: a secret pasted in its place must not reach the history.
      `no import credential of that name on this worker (configured: ${listed(names, IMPORT_CREDENTIALS_SETTING)})`,
      CredentialFailure.Unknown,
      { configured: names },
    );
  }
  const vars = importCredentialVariables(name);
  const what = `import credential ${JSON.stringify(name)}`;
  const username = readNamed(vars.username, env, what);
  const password = readNamed(vars.password, env, what);
  const missing = [username ? undefined : vars.username, password ? undefined : vars.password].filter(Boolean);
  if (missing.length > 0) {
    throw ApplicationFailure.nonRetryable(`${what} is listed in ${IMPORT_CREDENTIALS_SETTING} but ${missing.map((v) => `${v} (or ${v}_FILE)`).join(' and ')} is not set on the worker`, CredentialFailure.Unreadable);
  }
  return { username: username!, password: password! };
}

/** The variable holding sink secret `name`. */
export function sinkSecretVariable(name: string): string {
  return name === DEFAULT_SINK_SECRET ? DEFAULT_SINK_SECRET_VARIABLE : `LONGHAUL_SINK_${variablePart(name)}_SECRET`;
}

/** The sink secret names this worker has: `default`, then `LONGHAUL_SINK_SECRETS`. */
export function sinkSecretNames(env: NodeJS.ProcessEnv = process.env): string[] {
  return [...new Set([DEFAULT_SINK_SECRET, ...configuredNames(SINK_SECRETS_SETTING, env)])];
}

/**
 * The variable of a sink secret the worker is configured with, or `UnknownCredential` listing the names it has.
 * Whether the variable holds a value is the caller's question (`SinkSecretMissing`).
 */
export function configuredSinkSecretVariable(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const names = sinkSecretNames(env);
  if (!names.includes(name)) {
    throw ApplicationFailure.nonRetryable(`no sink secret of that name on this worker (configured: ${names.join(', ')}; more with ${SINK_SECRETS_SETTING})`, CredentialFailure.Unknown, { configured: names });
  }
  return sinkSecretVariable(name);
}
