/**
 * Token providers for GitHub credentials: a personal/installation token from the environment, or a GitHub
 * App whose installation tokens `@octokit/auth-app` mints (a JWT signed with the App's private key) and
 * refreshes before they expire (they live one hour; the library caches them and renews early).
 */
import { readFileSync } from 'node:fs';
import { createAppAuth } from '@octokit/auth-app';
import { request } from '@octokit/request';
import { readSecret, type GithubCredentialConfig } from '../config';
import type { TokenProvider } from './api-client';

export function githubTokenProvider(credential: GithubCredentialConfig): TokenProvider {
  const auth = credential.auth;
  if (auth.kind === 'token') return () => readSecret(auth.env);
  let appAuth: ReturnType<typeof createAppAuth> | undefined;
  return async () => {
    // The key is read on first use, so a worker starts (and reports a bad path) without touching GitHub.
    appAuth ??= createAppAuth({
      appId: auth.appId,
      privateKey: readFileSync(auth.privateKeyFile, 'utf8'),
      installationId: auth.installationId,
      // GHES: tokens are minted on the same API base URL the requests go to.
      request: request.defaults({ baseUrl: credential.apiUrl.replace(/\/+$/, '') }),
    });
    const { token } = await appAuth({ type: 'installation' });
    return token;
  };
}
