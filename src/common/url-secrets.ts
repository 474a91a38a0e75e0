/**
 * Credentials embedded in URLs a user passes (sink URLs, a source import's `vcsUrl`): refused before
 * anything starts. A URL given to longhaul lands in workflow input, and so in Temporal's history, the
 * UI, logs and `--list` output, where a secret must never be; secrets are passed as references (the
 * name of an environment variable the worker reads at call time) instead.
 *
 * Pure and deterministic: used by workflow input validation, the CLI and tests.
 */

/** Query parameters that carry a credential on the services longhaul talks to (compared case-insensitively). */
export const SECRET_QUERY_PARAMETERS = [
  'access_token',
  'token',
  'sig',
  'signature',
  'x-amz-signature',
  'x-amz-credential',
  'x-goog-signature',
  'x-goog-credential',
  'api_key',
  'apikey',
  'key',
  'secret',
  'client_secret',
  'password',
  'private_token',
  'auth',
] as const;

/** Prefixes of well-known token formats; matched anywhere in the URL (path, query, fragment, host). */
export const TOKEN_PATTERNS: readonly { name: string; pattern: RegExp }[] = [
  { name: 'GitHub personal access token (ghp_)', pattern: /ghp_[A-Za-z0-9]{16,}/ },
  { name: 'GitHub OAuth token (gho_)', pattern: /gho_[A-Za-z0-9]{16,}/ },
  { name: 'GitHub user-to-server token (ghu_)', pattern: /ghu_[A-Za-z0-9]{16,}/ },
  { name: 'GitHub server-to-server token (ghs_)', pattern: /ghs_[A-Za-z0-9]{16,}/ },
  { name: 'GitHub refresh token (ghr_)', pattern: /ghr_[A-Za-z0-9]{16,}/ },
  { name: 'GitHub fine-grained token (github_pat_)', pattern: /github_pat_[A-Za-z0-9_]{16,}/ },
  { name: 'GitLab personal access token (glpat-)', pattern: /glpat-[A-Za-z0-9_-]{16,}/ },
  { name: 'Slack token (xoxb-/xoxp-/xoxa-/xoxr-)', pattern: /xox[bpar]-[A-Za-z0-9-]{10,}/ },
  { name: 'AWS access key id (AKIA/ASIA)', pattern: /(?:AKIA|ASIA)[0-9A-Z]{16}/ },
  { name: 'Google API key (AIza)', pattern: /AIza[0-9A-Za-z_-]{35}/ },
  { name: 'Google OAuth access token (ya29.)', pattern: /ya29\.[0-9A-Za-z_-]{16,}/ },
  { name: 'npm token (npm_)', pattern: /npm_[A-Za-z0-9]{36}/ },
];

/** How a sink's secret is passed by reference (the default advice). */
export const SINK_SECRET_REFERENCE = 'for a sink: --sink-secret NAME, a signing secret configured on the workers (LONGHAUL_SINK_SECRETS); in workflow input: secret: "NAME"';

/** What the user should do instead, appended to every refusal. */
function hint(fieldName: string, reference: string): string {
  return `remove it from ${fieldName} and pass the secret by reference instead (${reference})`;
}

/** Decodes percent-escapes where possible, so `%67hp_…` cannot slip past the token patterns. */
function decoded(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * Every way `url` carries a credential, as messages naming `fieldName` and saying how to pass the
 * secret by reference instead (empty when the URL carries none). The secret itself is never repeated
 * in a message. A value that is not a URL is only checked for token patterns (callers validate the
 * URL's shape themselves).
 */
export function credentialInUrlProblems(url: string, fieldName: string, reference: string = SINK_SECRET_REFERENCE): string[] {
  if (typeof url !== 'string' || url === '') return [];
  const problems: string[] = [];
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed) {
    // A bare user name is an account, not a secret (`ssh://git@github.com/…`); a password, or a user name
    // that is itself a token (caught by the patterns below), is.
    if (parsed.password) {
      problems.push(`${fieldName} carries credentials in its user-info part (user:password@host); ${hint(fieldName, reference)}`);
    }
    const names = new Set<string>();
    for (const [name] of parsed.searchParams) names.add(name.toLowerCase());
    // Fragments are not sent, but they are stored with the input like the rest of the URL.
    const fragment = new URLSearchParams(parsed.hash.replace(/^#/, ''));
    for (const [name] of fragment) names.add(name.toLowerCase());
    for (const name of names) {
      if ((SECRET_QUERY_PARAMETERS as readonly string[]).includes(name)) {
        problems.push(`${fieldName} carries a credential in its "${name}" parameter; ${hint(fieldName, reference)}`);
      }
    }
  }
  const text = `${url}\n${decoded(url)}`;
  for (const { name, pattern } of TOKEN_PATTERNS) {
    if (pattern.test(text)) problems.push(`${fieldName} contains what looks like a ${name}; ${hint(fieldName, reference)}`);
  }
  return problems;
}
