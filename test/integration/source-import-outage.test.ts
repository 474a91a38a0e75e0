/**
 * Issue 8's outage: every API call fails for 5 minutes (alternately a 502 with an HTML body and a connection
 * reset) while an import runs and while a Google operation (log-bucket create) runs. Both workflows wait it out
 * on their outage budget and complete afterwards, with exactly one import and one operation created: a failed
 * poll is only ever followed by another poll. The two run concurrently.
 *
 * On a time-skipping environment: the outage is a fault window on the emulator's clock, which is the
 * environment's, so its 5 minutes (and the import's 2) pass while the workflows wait between polls.
 */
import { describe, expect, it } from 'vitest';
import { importStatusQuery, sourceImport } from '../../src/processes/source-import/workflow';
import { logBucketCreate } from '../../src/processes/google-operation/log-bucket';
import { operationStatusQuery } from '../../src/processes/google-operation/operation';
import { useTimeSkippingStack } from '../helpers/stack';
import { fixtureWithImportRepos, waitForImportStatus } from '../helpers/source-import';
import { requestsTo } from '../helpers/emulator';
import { eventually } from '../helpers/wait';
import { FAST_POLL, QUICK_OUTAGE_BACKOFF, SHORT_OUTAGE_MS } from '../helpers/presets';

/**
 * Polls every second until the outage (for at most 10 minutes: the Google validation refuses bounds whose polls
 * could pass a run's event budget); during it the backoff is capped at 20 s so the end is noticed soon.
 */
const POLL = { ...FAST_POLL, timeoutMs: 10 * 60 * 1000 };

describe('a 5-minute outage of every API call', () => {
  const stack = useTimeSkippingStack({
    emulator: {
      fixture: fixtureWithImportRepos('outage', 2),
      // The import takes about 2 minutes, the bucket's operation 1: both finish on the server during the outage.
      imports: { timeScale: 1, detectingMs: 2_000, importingMs: 60_000, mappingMs: 30_000, pushingMs: 30_000 },
      google: { buckets: { scheduledMs: 1_000, waitingForPermissionsMs: 1_000, runningMs: 60_000 } },
    },
  });

  it(
    'an import and a log-bucket create both wait it out and complete, each created exactly once',
    async () => {
      const importHandle = await stack.client.workflow.start(sourceImport, {
        taskQueue: stack.taskQueue,
        workflowId: `import-outage-${Date.now()}`,
        args: [{ owner: 'octo-org', repo: 'outage-1', vcsUrl: 'https://svn.example.test/repos/happy', poll: POLL, outage: QUICK_OUTAGE_BACKOFF }],
      });
      const parent = 'projects/demo-project/locations/global';
      const bucketId = `outage-${Date.now().toString(36)}`;
      const bucketHandle = await stack.client.workflow.start(logBucketCreate, {
        taskQueue: stack.taskQueue,
        workflowId: `bucket-outage-${Date.now()}`,
        args: [{ parent, bucketId, poll: POLL, outage: QUICK_OUTAGE_BACKOFF }],
      });
      await waitForImportStatus(importHandle, (s) => s.status === 'importing', 'importing', 60_000);
      await eventually(async () => ((await bucketHandle.query(operationStatusQuery)).state === 'RUNNING' ? true : undefined), 'the bucket operation running', 60_000);

      const faultsBefore = stack.emulator.stats.faultsInjected;
      const outageStarted = await stack.clock.sync();
      const activeUntilMs = outageStarted + SHORT_OUTAGE_MS;
      // Every call, to every API: every other one a 502 HTML page, the rest connection resets.
      stack.emulator.setFaults([
        { kind: 'status', status: 502, html: true, every: 2, activeUntilMs },
        { kind: 'reset', activeUntilMs },
      ]);
      // The outage itself is the scenario: 5 minutes of the environment's time, then the APIs answer again.
      await stack.env.sleep(SHORT_OUTAGE_MS);
      const injected = stack.emulator.stats.faultsInjected - faultsBefore;

      // Both workflows were waiting the outage out, not failed.
      const midImport = await importHandle.describe();
      const midBucket = await bucketHandle.describe();
      expect(midImport.status.name).toBe('RUNNING');
      expect(midBucket.status.name).toBe('RUNNING');

      const [imported, bucket] = await Promise.all([importHandle.result(), bucketHandle.result()]);
      const closedAt = Math.max(...(await Promise.all([importHandle.describe(), bucketHandle.describe()])).map((d) => d.closeTime!.getTime()));
      const importStatus = await importHandle.query(importStatusQuery);
      const bucketStatus = await bucketHandle.query(operationStatusQuery);
      console.info(
        `[outage] ${Math.round((closedAt - outageStarted) / 1000)} s from outage start to both results; ${injected} calls failed during the outage; ` +
          `import: ${importStatus.failedPolls} failed polls, ${importStatus.polls} polls; bucket: ${bucketStatus.failedPolls} failed polls, ${bucketStatus.polls} polls`,
      );

      expect(imported.status).toBe('complete');
      expect(stack.emulator.imports.get('octo-org', 'outage-1')!.events.filter((e) => e.kind === 'put')).toHaveLength(1);
      expect(stack.emulator.imports.pushes('octo-org', 'outage-1')).toHaveLength(1);
      expect(importStatus.failedPolls).toBeGreaterThan(0);

      const name = `${parent}/buckets/${bucketId}`;
      expect(bucket).toMatchObject({ bucket: name, state: 'SUCCEEDED' });
      expect(requestsTo(stack.emulator, 'POST', 'buckets:createAsync')).toBe(1);
      expect([...stack.emulator.google.buckets.operations.values()].filter((op) => op.kind === 'create' && op.bucketName === name)).toHaveLength(1);
      expect(bucketStatus.failedPolls).toBeGreaterThan(0);
      expect(injected).toBeGreaterThan(20);
    },
    15 * 60 * 1000,
  );
});
