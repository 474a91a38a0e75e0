/**
 * Which release of longhaul this is: the package's version (package.json, bumped for every change users would
 * notice; CHANGELOG.md says what each brought and how to upgrade). `longhaul --version` prints it, the worker
 * logs it at start, serves it as `longhaul_build_info{version=…}` and polls with it as its deployment version.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setting } from './settings';

/** The Worker Deployment every longhaul worker belongs to; each release is one version of it. */
export const DEPLOYMENT_NAME = 'longhaul';

let version: string | undefined;

/** This release's version, `0.2.0` (read once from package.json: under tsx and in dist/ it is two levels up). */
export function releaseVersion(): string {
  version ??= (JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;
  return version;
}

/**
 * The worker's deployment version: deployment `longhaul` (`LONGHAUL_WORKER_DEPLOYMENT`), build id the release
 * version (`LONGHAUL_BUILD_ID`). Temporal shows it as `longhaul.0.2.0` on the task queue's pollers (`longhaul
 * doctor`); the worker polls with it and `longhaul_build_info` names it, both from here.
 */
export function workerDeploymentVersion(env: NodeJS.ProcessEnv = process.env): { deploymentName: string; buildId: string } {
  return { deploymentName: setting('LONGHAUL_WORKER_DEPLOYMENT', env) || DEPLOYMENT_NAME, buildId: setting('LONGHAUL_BUILD_ID', env) || releaseVersion() };
}

/** A deployment version as Temporal writes it: `longhaul.0.2.0` (this release's, unless another is given). */
export function deploymentVersionName(version: { deploymentName: string; buildId: string } = workerDeploymentVersion()): string {
  return `${version.deploymentName}.${version.buildId}`;
}
