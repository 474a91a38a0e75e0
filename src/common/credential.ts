/**
 * Naming the credential a workflow's API calls use. A workflow input may carry `credential: "<name>"`
 * (a name from the worker fleet's credential config, never a secret); the workflow interceptor
 * (`workflows/kit/credential-interceptor.ts`) carries it in a header on every activity, child workflow and
 * continue-as-new it starts, and the worker's activity interceptor (`activities/credential-scope.ts`)
 * makes the activity's client, host and rate budget the ones of that name.
 *
 * A header rather than a field of every activity input: every activity of every workflow gets it the same
 * way, with no activity signature to forget, and it is recorded in history with the activity it belongs to.
 */
import * as v from 'valibot';
import { ApplicationFailure } from '@temporalio/common';
import { firstProblem, problemsOf } from './schema';

import { FAILURES, failureTypes } from './failures';

/** Failure types of named credentials: a name that is not valid, or not configured on the worker. */
export const CredentialFailure = failureTypes(FAILURES.credential);

/** The Temporal header carrying the credential name. */
export const CREDENTIAL_HEADER = 'longhaul-credential';

/** Credential names: the same rule the worker's `LONGHAUL_GITHUB_CREDENTIALS` config enforces. */
const CREDENTIAL_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/i;

/** Looks like a token rather than a name: GitHub token prefixes, JWTs, long opaque strings. */
const SECRET_LIKE = /^(gh[pousr]_|github_pat_|ya29\.|eyJ)|^[A-Za-z0-9_-]{36,}$/;

/** The setting listing the source-import credentials the workers hold (`LONGHAUL_IMPORT_<NAME>_USERNAME`, `…_PASSWORD`). */
export const IMPORT_CREDENTIALS_SETTING = 'LONGHAUL_IMPORT_CREDENTIALS';
/** The setting listing the feed sinks' signing secrets the workers hold besides the default (`LONGHAUL_SINK_<NAME>_SECRET`). */
export const SINK_SECRETS_SETTING = 'LONGHAUL_SINK_SECRETS';
/** The sink secret a sink without `secret` uses, always configured; its variable is the one every release has read. */
export const DEFAULT_SINK_SECRET = 'default';
export const DEFAULT_SINK_SECRET_VARIABLE = 'LONGHAUL_SINK_SECRET';

/** `env:NAME` and `file:/path`: the references 0.4.0 let an input choose any variable or file of the worker with. */
const REFERENCE_FORM = /^\s*(env|file):/i;

/** Whether a value has the form of a retired `env:`/`file:` reference (refused, never resolved). */
export function isCredentialReference(value: unknown): value is string {
  return typeof value === 'string' && REFERENCE_FORM.test(value);
}

/**
 * The typed, permanent refusal of a retired reference in the input's `field` (`setting` lists what may be named
 * instead). Nothing is read; the value is not echoed.
 */
export function credentialReferenceRefused(field: string, setting: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: CredentialFailure.ReferenceRefused,
    nonRetryable: true,
    message: `${field} names a variable or a file of the worker (env:, file:, secretEnv), which is refused: name a secret configured on the workers (${setting}); nothing was read or sent`,
    details: [{ field, setting }],
  });
}

/**
 * The schema of a field that names a secret configured on the workers (`setting` lists them, e.g.
 * `LONGHAUL_IMPORT_CREDENTIALS`): a valid name, never a secret, never an `env:`/`file:` reference. No message
 * echoes the value: a secret or a path pasted here must not reach history or logs.
 */
export function configuredNameSchema(what: string, setting: string) {
  const expected = `must be the name of ${what} configured on the workers (${setting})`;
  return firstProblem(
    v.pipe(
      v.string(expected),
      v.nonEmpty(expected),
      v.check((name) => !REFERENCE_FORM.test(name), `${expected}: env: and file: references are refused, nothing is read from the worker's environment or files`),
      v.check((name) => !SECRET_LIKE.test(name), `looks like a secret: name ${what} configured on the workers (${setting}), never the secret itself`),
      v.check((name) => CREDENTIAL_NAME.test(name), `${expected}: letters, digits, ".", "_" or "-" (at most 63)`),
    ),
  );
}

/** A workflow input's `credential`: absent, or a valid name. */
export const CredentialNameSchema = v.optional(
  firstProblem(
    v.pipe(
      v.string('must be the name of a configured credential (e.g. "github")'),
      v.nonEmpty('must be the name of a configured credential (e.g. "github")'),
      // Checked first and reported without echoing the value: a secret pasted here must not reach logs.
      v.check((name) => !SECRET_LIKE.test(name), 'looks like a secret: name a credential configured on the workers (LONGHAUL_GITHUB_CREDENTIALS), never the token itself'),
      v.regex(CREDENTIAL_NAME, (issue) => `${JSON.stringify(issue.input)} must be letters, digits, ".", "_" or "-" (at most 63)`),
    ),
  ),
);

/** Problems with a workflow input's `credential` (empty when absent or a valid name). */
export function credentialNameProblems(value: unknown): string[] {
  return problemsOf(CredentialNameSchema, value, 'credential');
}

/** The `credential` field of a workflow's first argument, if it has one. */
export function credentialOfInput(args: readonly unknown[]): unknown {
  const first = args[0];
  return first !== null && typeof first === 'object' && 'credential' in first ? (first as { credential?: unknown }).credential : undefined;
}

/**
 * The field every workflow input accepts to name its credential: the name of the credential (and so the host
 * and rate budget) the workflow's API calls use, as configured on the workers (`LONGHAUL_GITHUB_CREDENTIALS`,
 * `GITHUB_<NAME>_TOKEN`/`_API_URL`/App settings). Never a secret. Default: the workers' default credential.
 * Its checks run in the workflow interceptor, before the workflow's own.
 */
export interface CredentialChoice {
  credential?: string;
}
