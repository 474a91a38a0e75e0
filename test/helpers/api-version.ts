/**
 * The GitHub REST API version a test file runs under (issue 39's matrix, docs/development.md, "Two GitHub API
 * versions"). Each GitHub-facing file runs under one version, alternated by file (a hash of its path, so the split is
 * stable and about half and half); the conformance suites (`github-api-matrix.json`) run under 2022-11-28 here and
 * again under 2026-03-10 in a project of their own. `LONGHAUL_TEST_GITHUB_API_VERSION=…` runs every file under one
 * version (`npm run test:api-version:2026` / `…:2022`: the whole suite under the other half of the matrix).
 */
import { createHash } from 'node:crypto';
import { relative } from 'node:path';
import { expect } from 'vitest';
import { GITHUB_API_VERSIONS, type GithubApiVersion } from '../../src/config';
import matrix from '../github-api-matrix.json';

/** The variable that runs a file under one version (the second project sets it; a whole run may too). */
export const TEST_API_VERSION_ENV = matrix.env;
const BOTH_API_VERSION_FILES: readonly string[] = matrix.bothVersionFiles;

/** The version of the running test file (see above), or of `file`. */
export function testGithubApiVersion(file: string | undefined = expect.getState().testPath): GithubApiVersion {
  const forced = process.env[TEST_API_VERSION_ENV];
  if (forced) {
    const version = GITHUB_API_VERSIONS.find((v) => v === forced);
    if (!version) throw new Error(`${TEST_API_VERSION_ENV} must be one of ${GITHUB_API_VERSIONS.join(', ')}, got ${JSON.stringify(forced)}`);
    return version;
  }
  if (!file) return GITHUB_API_VERSIONS[0];
  const path = relative(process.cwd(), file).replaceAll('\\', '/');
  if (BOTH_API_VERSION_FILES.includes(path)) return GITHUB_API_VERSIONS[0];
  return GITHUB_API_VERSIONS[createHash('sha1').update(path).digest()[0] % GITHUB_API_VERSIONS.length];
}
