import { describe, expect, it } from 'vitest';
import { checkGithubAnswer, checkGithubSchema, findTemplate } from '../helpers/github-openapi';

// The validator the emulator's schema tests rely on: it must find the route and catch a missing required field.
describe("GitHub's OpenAPI description as a validator", () => {
  it('finds the template of a concrete path, literal segments first', () => {
    expect(findTemplate('GET', '/orgs/octo-org/migrations/7')).toBe('/orgs/{org}/migrations/{migration_id}');
    expect(findTemplate('GET', '/orgs/octo-org/migrations?per_page=10')).toBe('/orgs/{org}/migrations');
    expect(findTemplate('DELETE', '/orgs/octo-org/migrations/7/repos/alpha/lock')).toBe('/orgs/{org}/migrations/{migration_id}/repos/{repo_name}/lock');
  });

  it('names the required fields a body lacks, and accepts nullable ones as null', () => {
    const partial = checkGithubAnswer('GET', '/orgs/octo-org/migrations/7', 200, { id: 7, state: 'pending' });
    expect(partial.valid).toBe(false);
    expect(partial.errors).toContain("/ must have required property 'guid'");
    const rateLimit = checkGithubAnswer('GET', '/rate_limit', 200, {
      resources: { core: { limit: 5000, remaining: 4999, reset: 1, used: 1 }, search: { limit: 30, remaining: 30, reset: 1, used: 0 } },
      rate: { limit: 5000, remaining: 4999, reset: 1, used: 1 },
    });
    expect(rateLimit.errors).toEqual([]);
  });

  it('accepts no body where the description documents none, and refuses one', () => {
    expect(checkGithubAnswer('DELETE', '/orgs/octo-org/migrations/7/archive', 204, undefined).valid).toBe(true);
    expect(checkGithubAnswer('DELETE', '/orgs/octo-org/migrations/7/archive', 204, { ok: true }).valid).toBe(false);
  });

  it('follows shared answers (404 not_found, 422 validation_failed) to their schemas', () => {
    const notFound = { message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' };
    expect(checkGithubAnswer('GET', '/orgs/octo-org/migrations/7', 404, notFound).errors).toEqual([]);
    expect(checkGithubAnswer('GET', '/orgs/octo-org/migrations/7', 404, { message: 404 }).valid).toBe(false);
    const invalid = checkGithubAnswer('POST', '/orgs/octo-org/migrations', 422, { message: 'Validation Failed', errors: [{ field: 'repositories' }] });
    expect(invalid.errors).toEqual(["/ must have required property 'documentation_url'", "/errors/0 must have required property 'code'"]);
  });

  it('checks a body against one named schema', () => {
    expect(checkGithubSchema('basic-error', { message: 'API rate limit exceeded', documentation_url: 'https://docs.github.com/rest' }).valid).toBe(true);
    expect(checkGithubSchema('basic-error', { message: ['no'] }).errors).toEqual(['/message must be string {"type":"string"}']);
  });
});
