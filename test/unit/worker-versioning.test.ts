import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config';
import { releaseVersion } from '../../src/release';
import { describeWorkerDeployment, workerDeploymentFromEnv } from '../../src/temporal/worker-versioning';
import pkg from '../../package.json';

describe('worker versioning from the environment', () => {
  it('is unversioned by default, with the release as its build id', () => {
    const d = workerDeploymentFromEnv({});
    expect(releaseVersion()).toBe(pkg.version);
    expect(d).toEqual({ version: { deploymentName: 'longhaul', buildId: pkg.version }, useWorkerVersioning: false });
    expect(describeWorkerDeployment(d)).toBe(`build longhaul.${pkg.version}, unversioned (LONGHAUL_WORKER_VERSIONING=off)`);
  });

  it('makes every workflow type AUTO_UPGRADE when versioning is on, and says how the version becomes current', () => {
    const d = workerDeploymentFromEnv({ LONGHAUL_WORKER_VERSIONING: 'on', LONGHAUL_WORKER_DEPLOYMENT: 'prod-eu', LONGHAUL_BUILD_ID: '0.2.0-hotfix1' });
    expect(d).toEqual({ version: { deploymentName: 'prod-eu', buildId: '0.2.0-hotfix1' }, useWorkerVersioning: true, defaultVersioningBehavior: 'AUTO_UPGRADE' });
    expect(describeWorkerDeployment(d)).toContain('temporal worker deployment set-current-version --deployment-name prod-eu --build-id 0.2.0-hotfix1');
  });

  it('refuses a switch that is neither on nor off, and a deployment name with a dot', () => {
    expect(() => workerDeploymentFromEnv({ LONGHAUL_WORKER_VERSIONING: 'yes' })).toThrow(ConfigError);
    expect(() => workerDeploymentFromEnv({ LONGHAUL_WORKER_DEPLOYMENT: 'longhaul.prod' })).toThrow(/LONGHAUL_WORKER_DEPLOYMENT must be letters, digits/);
  });
});
