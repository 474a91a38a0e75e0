/**
 * Worker Versioning (Temporal Worker Deployments): which deployment version a worker is, and whether it takes
 * part in versioned routing. See docs/operations.md, "Upgrading: releases, versioning and rollout".
 *
 * - `LONGHAUL_WORKER_VERSIONING=on` makes the worker a version of a Worker Deployment: it polls, but the
 *   server gives it tasks only once an operator made its version current (or ramping):
 *   `temporal worker deployment set-current-version --deployment-name longhaul --build-id 0.2.0`.
 *   Default `off`: an unversioned worker, as 0.1.0 was (the dev server, `npm start`, the tests).
 * - `LONGHAUL_WORKER_DEPLOYMENT` names the deployment (default `longhaul`); the build id is the release,
 *   package.json's version (`LONGHAUL_BUILD_ID` overrides it, e.g. `0.2.0-hotfix1`).
 *
 * Every workflow type is AUTO_UPGRADE: the next workflow task of a running workflow goes to the current
 * version, and `patched()` keeps old histories replaying (the replay tests and the upgrade test prove it).
 * Why not PINNED for the bounded processes is written down in the operations guide.
 */
import type { WorkerDeploymentOptions } from '@temporalio/worker';
import { ConfigError, onOff } from '../config';
import { deploymentVersionName, workerDeploymentVersion } from '../release';

/** The worker's deployment version and whether it is versioned, from the environment. */
export function workerDeploymentFromEnv(env: NodeJS.ProcessEnv = process.env): WorkerDeploymentOptions {
  const versioned = onOff(env, 'LONGHAUL_WORKER_VERSIONING') ?? false;
  const version = workerDeploymentVersion(env);
  // Temporal joins the two with a "." (`longhaul.0.2.0`): the deployment name may not contain one.
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(version.deploymentName)) {
    throw new ConfigError(`LONGHAUL_WORKER_DEPLOYMENT must be letters, digits, "_" or "-", got ${JSON.stringify(version.deploymentName)}`);
  }
  return versioned ? { version, useWorkerVersioning: true, defaultVersioningBehavior: 'AUTO_UPGRADE' } : { version, useWorkerVersioning: false };
}

/** One line for the worker's start-up output. */
export function describeWorkerDeployment(d: WorkerDeploymentOptions): string {
  const name = deploymentVersionName(d.version);
  return d.useWorkerVersioning
    ? `versioned as ${name} (${d.defaultVersioningBehavior}; gets tasks once this version is current: temporal worker deployment set-current-version --deployment-name ${d.version.deploymentName} --build-id ${d.version.buildId})`
    : `build ${name}, unversioned (LONGHAUL_WORKER_VERSIONING=off)`;
}
