/**
 * The GitHub REST API version as a per-credential setting (issue 39): read from `GITHUB_API_VERSION` /
 * `GITHUB_<NAME>_API_VERSION`, refused when GitHub does not know it, sent in `X-GitHub-Api-Version` and shown by
 * `longhaul doctor`.
 */
import { describe, expect, it } from 'vitest';
import { MockAgent } from 'undici';
import { ConfigError, DEFAULT_GITHUB_API_VERSION, loadConfig } from '../../src/config';
import { createGithubClient } from '../../src/http/github';
import { configuredCredentials, formatDoctorReport, type DoctorReport } from '../../src/cli/doctor';

const API = 'https://api.example.test';

describe('GITHUB_API_VERSION', () => {
  it('is 2022-11-28 unless a credential names another version GitHub serves', () => {
    const config = loadConfig({ LONGHAUL_GITHUB_CREDENTIALS: 'ghes,next', GITHUB_NEXT_API_VERSION: '2026-03-10' });
    expect(config.githubCredentials.map((c) => [c.name, c.apiVersion])).toEqual([
      ['github', DEFAULT_GITHUB_API_VERSION],
      ['ghes', '2022-11-28'],
      ['next', '2026-03-10'],
    ]);
    expect(loadConfig({ GITHUB_API_VERSION: '2026-03-10' }).githubCredentials[0].apiVersion).toBe('2026-03-10');
  });

  it('refuses a version GitHub does not serve, naming the variable and the versions it takes', () => {
    expect(() => loadConfig({ GITHUB_API_VERSION: '2026-03-01' })).toThrow(ConfigError);
    expect(() => loadConfig({ LONGHAUL_GITHUB_CREDENTIALS: 'ghes', GITHUB_GHES_API_VERSION: 'v3' })).toThrow(
      /GITHUB_GHES_API_VERSION must be one of GitHub's REST API versions 2022-11-28, 2026-03-10, got "v3"/,
    );
  });

  it("is the X-GitHub-Api-Version of every request the credential's client sends", async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    agent.enableCallHistory();
    agent.get(API).intercept({ path: '/rate_limit', method: 'GET' }).reply(200, { resources: {} }, { headers: { 'content-type': 'application/json' } }).times(2);
    for (const apiVersion of [undefined, '2026-03-10'] as const) {
      await createGithubClient({ baseUrl: API, token: () => 't', dispatcher: agent, apiVersion }).request({ method: 'GET', path: '/rate_limit' });
    }
    const sent = (agent.getCallHistory()?.calls() ?? []).map((c) => (c.headers as Record<string, string>)['x-github-api-version']);
    expect(sent).toEqual(['2022-11-28', '2026-03-10']);
    await agent.close();
  });

  it('is shown by `longhaul doctor` beside each GitHub credential', () => {
    const env = { LONGHAUL_GITHUB_CREDENTIALS: 'next', GITHUB_NEXT_API_VERSION: '2026-03-10', GITHUB_TOKEN: 'x' };
    const credentials = configuredCredentials(loadConfig(env), env, {});
    expect(credentials.filter((c) => c.kind === 'github').map((c) => c.apiVersion)).toEqual(['2022-11-28', '2026-03-10']);
    const report: DoctorReport = { version: '0', deploymentVersion: 'longhaul.0', connection: { address: 'x', tls: false, reachable: false }, taskQueue: { name: 'q', pollers: [] }, credentials, problems: [], notes: [] };
    const lines = formatDoctorReport(report);
    expect(lines).toContain('  github github → https://api.github.com (API version 2022-11-28): GITHUB_TOKEN (set)');
    expect(lines).toContain('  github next → https://api.github.com (API version 2026-03-10): GITHUB_NEXT_TOKEN (not set)');
  });
});
