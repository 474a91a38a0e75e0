/**
 * The lifecycle of running work through the `longhaul` command (compiled, as an installed release runs it; a real
 * process per invocation, as from separate terminals): start, then status / list / cancel / wait from other
 * invocations; exit codes per ending; `--json` exactly one object (errors too); batches; dry runs.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { startStack, useStack } from '../helpers/stack';
import { runLonghaul } from '../helpers/starter';
import { waitFor } from '../helpers/wait';

/** Parses stdout as exactly one JSON object (fails on anything before or after it). */
function oneObject(stdout: string): Record<string, unknown> {
  const value: unknown = JSON.parse(stdout);
  expect(typeof value === 'object' && value !== null && !Array.isArray(value)).toBe(true);
  return value as Record<string, unknown>;
}

describe('longhaul lifecycle commands', () => {
  // Exports take long enough to be seen exporting, listed and cancelled from other invocations.
  const stack = useStack({ emulator: { migrations: { exportMs: 600_000, pendingFraction: 0, archiveBytes: 10_000 } } });
  let dir: string;
  const cli = (args: string[]) => runLonghaul(args, stack.taskQueue);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'longhaul-cli-'));
  });

  it('migrate --json prints one object; status, list --state exporting and cancel (repositories unlocked, reported) work from other invocations; wait exits 3', async () => {
    const started = await cli(['migrate', '--org', 'octo-org', '--repo', 'alpha', '--repo', 'beta', '--lock', '--poll-initial', '1', '--json']);
    expect(started.code).toBe(0);
    const { workflowId } = oneObject(started.stdout) as { workflowId: string };
    expect(workflowId).toMatch(/^migrate-octo-org-alpha-beta-/);

    // The natural key (any order) names the same workflow.
    const status = await waitFor(
      'the migration to be exporting',
      async () => oneObject((await cli(['status', '--org', 'octo-org', '--repos', 'beta,alpha', '--json'])).stdout),
      (s) => s.state === 'exporting',
    );
    expect(status).toMatchObject({ workflowId, workflowType: 'orgMigration', workflowStatus: 'RUNNING', process: 'org-migration', summary: 'Export octo-org: alpha, beta → archive' });
    expect(status.line).toMatch(/^waiting · migration \d+ · state exporting · \d+ polls/);
    expect(stack.emulator.migrations.isLocked('octo-org', 'alpha')).toBe(true);

    // Reads from separate invocations at once, as from separate terminals (each a process of its own).
    const [text, listed, other] = await Promise.all([
      cli(['status', workflowId]),
      cli(['list', '--process', 'org-migration', '--state', 'exporting', '--json']),
      cli(['list', '--process', 'org-migration', '--state', 'exported', '--org', 'octo-org', '--json']),
    ]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`${workflowId}  orgMigration  RUNNING`);
    expect(text.stdout).toMatch(/state exporting/);

    expect(listed.code).toBe(0);
    const rows = (oneObject(listed.stdout).workflows as { workflowId: string; state: string; org: string }[]).filter((w) => w.workflowId === workflowId);
    expect(rows).toEqual([expect.objectContaining({ state: 'exporting', org: 'octo-org' })]);
    expect((oneObject(other.stdout).workflows as { workflowId: string }[]).map((w) => w.workflowId)).not.toContain(workflowId);

    const cancelled = await cli(['cancel', workflowId]);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout.trim()).toBe(`cancelled ${workflowId}: unlocked alpha, beta`);
    expect(stack.emulator.migrations.isLocked('octo-org', 'alpha')).toBe(false);
    expect(stack.emulator.migrations.isLocked('octo-org', 'beta')).toBe(false);

    const waited = await cli(['wait', workflowId, '--json']);
    expect(waited.code).toBe(3);
    expect(oneObject(waited.stdout)).toMatchObject({ workflowId, workflowStatus: 'CANCELLED' });
    const [closed, exporting] = await Promise.all([cli(['list', '--org', 'octo-org', '--closed']), cli(['list', '--process', 'org-migration', '--state', 'exporting', '--json'])]);
    // Listed under its ending: no longer among the exporting ones.
    expect(closed.stdout).toMatch(new RegExp(`^${workflowId}  CANCELLED  org-migration  cancelled  `, 'm'));
    expect((oneObject(exporting.stdout).workflows as { workflowId: string }[]).map((w) => w.workflowId)).not.toContain(workflowId);
  });

  it('wait exits 0 with the result when the workflow completes, 1 when it fails, 4 when it is terminated', async () => {
    stack.emulator.migrations.options.exportMs = 500;
    stack.emulator.migrations.options.failRepositories.push('with-actions');
    try {
      // Started, then waited for, from separate invocations running at once.
      const [ok, failing] = (
        await Promise.all([
          cli(['migrate', '--org', 'octo-org', '--repo', 'alpha', '--repo', 'gamma', '--poll-initial', '1', '--json']),
          cli(['migrate', '--org', 'octo-org', '--repo', 'with-actions', '--poll-initial', '1', '--json']),
        ])
      ).map((run) => oneObject(run.stdout).workflowId as string);
      const [completed, failed] = await Promise.all([cli(['result', ok]), cli(['wait', failing, '--json'])]);
      expect(completed.code).toBe(0);
      expect(completed.stdout).toMatch(/^migration \d+ exported\narchive: .* \(10000 bytes, sha256 [0-9a-f]{64}\)/);
      expect(failed.code).toBe(1);
      expect(oneObject(failed.stdout)).toMatchObject({ workflowStatus: 'FAILED', error: { type: 'MigrationExportFailed' } });
    } finally {
      stack.emulator.migrations.options.exportMs = 600_000;
      stack.emulator.migrations.options.failRepositories.length = 0;
    }
    const long = oneObject((await cli(['migrate', '--org', 'octo-org', '--repo', 'beta', '--repo', 'gamma', '--json'])).stdout).workflowId as string;
    await stack.client.workflow.getHandle(long).terminate('test');
    const terminated = await cli(['wait', long]);
    expect(terminated.code).toBe(4);
    expect(terminated.stderr).toMatch(new RegExp(`error: ${long} terminated`));
  });

  it("status shows the next poll of a quiet stretch from the poll activity's next attempt, not the stretch's start", async () => {
    // Every 20 s: after the first poll the export's unchanged answers are the attempts of one quiet activity. (Every
    // 10 s, a `status` that took about 10 s on a loaded machine kept sampling the same moment of each interval and
    // never saw one due in 1–6 s: 90 s out at load 16.)
    // Its own workflow id: the natural one (`migrate-octo-org-alpha-…`) is other files' on the shared server.
    const id = `lifecycle-quiet-status-${Date.now()}`;
    const started = await cli(['migrate', '--org', 'octo-org', '--repo', 'alpha', '--workflow-id', id, '--poll-initial', '20', '--poll-max', '20', '--json']);
    const { workflowId } = oneObject(started.stdout) as { workflowId: string };
    try {
      // The CLI reads its clock between `askedAt` (before it was started) and `seenAt` (after it ended).
      type View = { line: string; pending: { activity: string; nextAttemptAt?: string }[]; askedAt: number; seenAt: number };
      const dueIn = (v: View, from: number) => {
        const quiet = v.pending.find((p) => p.activity === 'quietGetMigration' && p.nextAttemptAt);
        return quiet ? Date.parse(quiet.nextAttemptAt!) - from : undefined;
      };
      // Seen well inside an interval: the workflow's own figure (20 s, from the stretch's start) is stale by then.
      const view = await waitFor(
        'a quiet poll due in 1–16 s',
        async () => {
          const askedAt = Date.now();
          const shown = oneObject((await cli(['status', workflowId, '--json'])).stdout) as Omit<View, 'askedAt' | 'seenAt'>;
          return { ...shown, askedAt, seenAt: Date.now() };
        },
        (v) => (dueIn(v, v.seenAt) ?? -1) >= 1_000 && dueIn(v, v.seenAt)! <= 16_000,
        90_000,
      );
      // Between the figures due from those two moments, however long the CLI took (a wall-clock allowance before).
      const shown = Number(/next poll in (\d+) s/.exec(view.line)?.[1]);
      expect(shown).toBeGreaterThanOrEqual(Math.floor(dueIn(view, view.seenAt)! / 1000));
      expect(shown).toBeLessThanOrEqual(Math.ceil(dueIn(view, view.askedAt)! / 1000));
    } finally {
      await cli(['cancel', workflowId, '--wait']);
    }
  });

  it('errors are one JSON object with --json: unknown workflow (1), usage error (2), invalid input (2)', async () => {
    // Four invocations at once: each is a process of its own, and none depends on another.
    const [missing, usage, unknownOption, invalid] = await Promise.all([
      cli(['status', 'no-such-workflow', '--json']),
      cli(['list', '--running', '--closed', '--json']),
      cli(['status', '--bogus', '--json']),
      cli(['migrate', '--org', 'octo-org', '--repo', 'not a repo!', '--json']),
    ]);
    expect(missing.code).toBe(1);
    expect(oneObject(missing.stdout)).toEqual({ error: { type: 'CliError', message: 'no workflow no-such-workflow' }, exitCode: 1 });
    expect(usage.code).toBe(2);
    expect(oneObject(usage.stdout)).toMatchObject({ exitCode: 2 });
    expect(unknownOption.code).toBe(2);
    expect(oneObject(unknownOption.stdout)).toMatchObject({ error: { type: 'commander.unknownOption' }, exitCode: 2 });
    expect(invalid.code).toBe(2);
    expect((oneObject(invalid.stdout).error as { message: string }).message).toContain('is not a valid repository name');
  });

  it('--batch CSV starts one migration per row or group, each with its readable id, and prints one object with them all; --repos-file one per line', async () => {
    const csv = join(dir, 'migrations.csv');
    await writeFile(csv, 'Org_Name,Repo_Name,group\nocto-org,alpha,w1\nocto-org,beta,w1\nocto-org,gamma,\nocto-org,https://github.com/octo-org/with-actions,\n');
    const { code, stdout } = await cli(['migrate', '--batch', csv, '--lock', '--json']);
    expect(code).toBe(0);
    const migrations = oneObject(stdout).migrations as { workflowId: string; repositories: string[]; workflowStatus: string }[];
    expect(migrations.map((m) => m.repositories)).toEqual([['alpha', 'beta'], ['gamma'], ['with-actions']]);
    expect(migrations.map((m) => m.workflowId)).toEqual([
      expect.stringMatching(/^migrate-octo-org-alpha-beta-/),
      expect.stringMatching(/^migrate-octo-org-gamma-/),
      expect.stringMatching(/^migrate-octo-org-with-actions-/),
    ]);
    expect(migrations.every((m) => m.workflowStatus === 'RUNNING')).toBe(true);
    const ids = migrations.map((m) => m.workflowId);
    await waitFor(
      'the batch to be listed',
      async () => (oneObject((await cli(['list', '--org', 'octo-org', '--running', '--json'])).stdout).workflows as { workflowId: string }[]).map((w) => w.workflowId),
      (listed) => ids.every((id) => listed.includes(id)),
    );
    for (const id of ids) await stack.client.workflow.getHandle(id).terminate('test cleanup');

    // A repos file: one migration per line; in text, one line per migration.
    const reposFile = join(dir, 'repos.txt');
    await writeFile(reposFile, '# wave 2\ngamma, with-actions\n\nalpha beta gamma\n');
    const text = await cli(['migrate', '--org', 'octo-org', '--repos-file', reposFile]);
    expect(text.code).toBe(0);
    const lines = text.stdout.trim().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(/^migrate-octo-org-gamma-with-actions-\S+ started \(octo-org: gamma, with-actions\)$/),
      expect.stringMatching(/^migrate-octo-org-alpha-beta-gamma-\S+ started \(octo-org: alpha, beta, gamma\)$/),
    ]);
    for (const line of lines) await stack.client.workflow.getHandle(line.split(' ')[0]).terminate('test cleanup');
  });

  it('--dry-run validates and prints what would be sent, and starts nothing', async () => {
    // Its own emulator and worker: in-flight calls of the other tests' workflows cannot blur the count.
    const quiet = await startStack();
    const cli = (args: string[]) => runLonghaul(args, quiet.taskQueue);
    const csv = join(dir, 'dry.csv');
    await writeFile(csv, 'org,repo\ndry-org,a\ndry-org,b\n');
    // Four dry runs at once (each a process of its own): none may start anything.
    const [single, batch, google, invalid] = await Promise.all([
      cli(['migrate', '--org', 'dry-org', '--repo', 'alpha', '--lock', '--dry-run', '--json']),
      cli(['migrate', '--batch', csv, '--dry-run', '--json']),
      cli(['dns-change', '--project', 'demo-project', '--zone', 'dry-zone', '--add', 'x.demo.example.com. A 300 192.0.2.1', '--dry-run']),
      cli(['migrate', '--org', 'dry-org', '--repo', 'bad name', '--dry-run']),
    ]);
    expect(single.code).toBe(0);
    expect(oneObject(single.stdout)).toMatchObject({
      dryRun: true,
      workflowType: 'orgMigration',
      workflowId: expect.stringMatching(/^migrate-dry-org-alpha-/),
      taskQueue: quiet.taskQueue,
      input: { org: 'dry-org', repositories: ['alpha'], lockRepositories: true },
      searchAttributes: { LonghaulProcess: 'org-migration', LonghaulOrg: 'dry-org' },
      staticSummary: 'Export dry-org: alpha → archive',
    });
    expect((oneObject(batch.stdout).migrations as unknown[]).length).toBe(2);
    expect(google.code).toBe(0);
    expect(google.stdout).toMatch(/^would start dnsChange dns-change-dry-zone-\S+ on task queue /);
    expect(invalid.code).toBe(2);

    const listed = await cli(['list', '--org', 'dry-org', '--json']);
    expect(oneObject(listed.stdout).workflows).toEqual([]);
    await quiet.stopWorker();
    expect(quiet.emulator.stats.requests).toBe(0);
    await quiet.stop();
  });
});
