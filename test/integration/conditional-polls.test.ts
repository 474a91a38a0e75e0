/**
 * The migration and import workflows poll conditionally and quietly: each status poll after the first sends
 * the last answer's ETag, the emulator answers 304 while nothing changed (not counted against the primary
 * limit), and such a poll is a retried attempt of one quiet-poll activity: it adds nothing to the history.
 * Only answers with something new come back to the workflow, each carrying the polls it took.
 */
import { describe, expect, it } from 'vitest';
import { useStack } from '../helpers/stack';
import { fetchHistory } from '../helpers/history';
import { migrationStatusQuery, orgMigration } from '../../src/processes/org-migration/workflow';
import { sourceImport } from '../../src/processes/source-import/workflow';
import { FAST_POLL } from '../helpers/presets';

const MIGRATION_POLL = 'GET /orgs/:org/migrations/:id';
const IMPORT_POLL = 'GET /repos/:owner/:repo/import';

/** The quiet poll activities' (`quietGetMigration`, `quietGetImport`) inputs and results in a history, decoded. */
async function pollActivities(client: Parameters<typeof fetchHistory>[0], workflowId: string, type: string) {
  const history = await fetchHistory(client, workflowId);
  const decode = (p: { data?: Uint8Array | null } | undefined | null) => (p?.data ? JSON.parse(Buffer.from(p.data).toString('utf8')) : undefined);
  const scheduled = new Map<string, { input: Record<string, unknown> }>();
  const results: { input: Record<string, unknown>; result: Record<string, unknown> }[] = [];
  for (const e of history.events ?? []) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s && s.activityType?.name === type) scheduled.set(String(e.eventId), { input: decode(s.input?.payloads?.[0]) });
    const c = e.activityTaskCompletedEventAttributes;
    const from = c && scheduled.get(String(c.scheduledEventId));
    if (c && from) results.push({ input: from.input, result: decode(c.result?.payloads?.[0]) });
  }
  return results;
}

describe('conditional status polls', () => {
  const stack = useStack({ emulator: { migrations: { exportMs: 8_000, pendingFraction: 0.25, archiveBytes: 10_000 }, imports: { detectingMs: 500, importingMs: 6_000, mappingMs: 500, pushingMs: 500 } } });

  it('a migration polled every second: 304s while the state holds, counted answers only for the changes', async () => {
    const workflowId = `conditional-migration-${Date.now()}`;
    stack.emulator.resetStats();
    const result = await stack.client.workflow.execute(orgMigration, { taskQueue: stack.taskQueue, workflowId, args: [{ org: 'octo-org', repositories: ['alpha'], poll: FAST_POLL }] });
    expect(result.state).toBe('exported');
    const polls = stack.emulator.stats.byRoute[MIGRATION_POLL];
    const notModified = stack.emulator.stats.notCountedByRoute[MIGRATION_POLL] ?? 0;
    // An 8-second export polled every second: several polls, of which only a change of state (at most
    // pending → exporting → exported, plus the first answer) is a counted 200.
    expect(polls).toBeGreaterThanOrEqual(4);
    expect(polls - notModified).toBeLessThanOrEqual(3);
    expect(notModified).toBeGreaterThanOrEqual(1);

    const recorded = await pollActivities(stack.client, workflowId, 'quietGetMigration');
    console.log(`quiet migration polls: ${polls} polls (${notModified} × 304) in ${recorded.length} activities of the history`);
    // Every poll the emulator saw is in one of the few activities the history holds; the 304s are not.
    expect(recorded.reduce((n, r) => n + Number(r.result.polls), 0)).toBe(polls);
    expect(recorded.length).toBeLessThanOrEqual(polls - notModified);
    expect(recorded.every((r) => r.result.kind === 'changed')).toBe(true);
    expect(recorded[0].input.etag).toBeUndefined();
    for (const { input } of recorded.slice(1)) expect(String(input.etag)).toMatch(/^W\/"[0-9a-f]{40}"$/);
    for (const { result: r } of recorded) expect((r.polled as { notModified?: boolean }).notModified).toBeUndefined();
    // The workflow's count of polls includes the quiet ones.
    const described = await stack.client.workflow.getHandle(workflowId).query(migrationStatusQuery);
    expect(described.polls).toBe(polls);
  });

  it('an import polled every second sends the last answer\'s ETag with every status poll after the first', async () => {
    const workflowId = `conditional-import-${Date.now()}`;
    stack.emulator.resetStats();
    const result = await stack.client.workflow.execute(sourceImport, {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [{ owner: 'octo-org', repo: 'alpha', vcsUrl: 'https://svn.example.test/repos/happy', vcs: 'subversion', poll: { ...FAST_POLL } }],
    });
    expect(result.status).toBe('complete');
    const recorded = await pollActivities(stack.client, workflowId, 'quietGetImport');
    expect(recorded.length).toBeGreaterThanOrEqual(2);
    expect(recorded.slice(1).every((r) => typeof r.input.etag === 'string')).toBe(true);
    const polls = stack.emulator.stats.byRoute[IMPORT_POLL];
    expect(polls).toBeGreaterThanOrEqual(recorded.reduce((n, r) => n + Number(r.result.polls), 0));
  });
});
