/**
 * `npm run bench:schema` — what a schema library costs longhaul, side by side: the bytes it adds to the
 * workflow bundle, its cold start (importing it and building the schemas in a fresh Node process), and whether
 * it runs in the workflow sandbox (a real worker on the Temporal time-skipping test server runs a workflow that
 * parses one good and one bad input with it).
 *
 *   npm run bench:schema                  # every candidate that is installed
 *   npm run bench:schema -- --runs 20     # cold starts per candidate (median reported)
 *
 * The representative schema is the org migration's input (a login, a list of names, flags, bounded numbers,
 * a nested poll object, a cross-field rule), written idiomatically for each library. The baseline is the same
 * workflow without a schema, so "bundle +" is what the library and the schema add. The candidates other than
 * the one longhaul uses (valibot) are measured only when installed: `npm install --no-save zod@4.6.7 typebox@1.4.3`.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { ensureTestServer } from '../test/servers/test-server';

interface Candidate {
  name: string;
  /** The package to find (a candidate not installed is skipped). */
  pkg: string;
  /** CommonJS source defining `parse(input)`: `{ ok: true } | { ok: false, issues: string[] }`. */
  source: string;
}

const LOGIN = String.raw`/^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/`;
const REPO = String.raw`/^[A-Za-z0-9._-]{1,100}$/`;

const CANDIDATES: Candidate[] = [
  {
    name: 'valibot 1',
    pkg: 'valibot',
    source: `
const v = require('valibot');
const ms = v.optional(v.pipe(v.number(), v.finite(), v.minValue(1000, 'between 1000 and 604800000'), v.maxValue(604800000, 'between 1000 and 604800000')));
const poll = v.optional(v.pipe(
  v.object({ initialIntervalMs: ms, maxIntervalMs: ms, backoffFactor: v.optional(v.pipe(v.number(), v.minValue(1), v.maxValue(10))), timeoutMs: ms }),
  v.check((p) => (p.maxIntervalMs ?? Infinity) >= (p.initialIntervalMs ?? 0), 'maxIntervalMs must be at least initialIntervalMs'),
));
const schema = v.object({
  org: v.pipe(v.string(), v.regex(${LOGIN}, 'a valid organization name')),
  repositories: v.pipe(v.array(v.pipe(v.string(), v.regex(${REPO}, 'a valid repository name'))), v.maxLength(100)),
  lockRepositories: v.optional(v.boolean()),
  excludeReleases: v.optional(v.boolean()),
  apiCallTimeoutMs: ms,
  poll,
  outage: v.optional(v.object({ budgetMs: ms, initialBackoffMs: ms, maxBackoffMs: ms })),
  eventsPerRun: v.optional(v.pipe(v.number(), v.integer(), v.minValue(50), v.maxValue(8000))),
});
exports.parse = (input) => {
  const r = v.safeParse(schema, input);
  return r.success ? { ok: true } : { ok: false, issues: r.issues.map((i) => (v.getDotPath(i) ?? '') + ': ' + i.message) };
};`,
  },
  {
    name: 'zod 4',
    pkg: 'zod',
    source: `
const { z } = require('zod');
const ms = z.number().finite().min(1000).max(604800000).optional();
const poll = z.object({ initialIntervalMs: ms, maxIntervalMs: ms, backoffFactor: z.number().min(1).max(10).optional(), timeoutMs: ms })
  .refine((p) => (p.maxIntervalMs ?? Infinity) >= (p.initialIntervalMs ?? 0), 'maxIntervalMs must be at least initialIntervalMs').optional();
const schema = z.object({
  org: z.string().regex(${LOGIN}, 'a valid organization name'),
  repositories: z.array(z.string().regex(${REPO}, 'a valid repository name')).max(100),
  lockRepositories: z.boolean().optional(),
  excludeReleases: z.boolean().optional(),
  apiCallTimeoutMs: ms,
  poll,
  outage: z.object({ budgetMs: ms, initialBackoffMs: ms, maxBackoffMs: ms }).optional(),
  eventsPerRun: z.number().int().min(50).max(8000).optional(),
});
exports.parse = (input) => {
  const r = schema.safeParse(input);
  return r.success ? { ok: true } : { ok: false, issues: r.error.issues.map((i) => i.path.join('.') + ': ' + i.message) };
};`,
  },
  {
    name: 'zod 4 mini',
    pkg: 'zod',
    source: `
const z = require('zod/mini');
const ms = z.optional(z.number().check(z.minimum(1000), z.maximum(604800000)));
const poll = z.optional(z.object({ initialIntervalMs: ms, maxIntervalMs: ms, backoffFactor: z.optional(z.number().check(z.minimum(1), z.maximum(10))), timeoutMs: ms })
  .check(z.refine((p) => (p.maxIntervalMs ?? Infinity) >= (p.initialIntervalMs ?? 0), 'maxIntervalMs must be at least initialIntervalMs')));
const schema = z.object({
  org: z.string().check(z.regex(${LOGIN}, 'a valid organization name')),
  repositories: z.array(z.string().check(z.regex(${REPO}, 'a valid repository name'))).check(z.maxLength(100)),
  lockRepositories: z.optional(z.boolean()),
  excludeReleases: z.optional(z.boolean()),
  apiCallTimeoutMs: ms,
  poll,
  outage: z.optional(z.object({ budgetMs: ms, initialBackoffMs: ms, maxBackoffMs: ms })),
  eventsPerRun: z.optional(z.number().check(z.int(), z.minimum(50), z.maximum(8000))),
});
exports.parse = (input) => {
  const r = schema.safeParse(input);
  return r.success ? { ok: true } : { ok: false, issues: r.error.issues.map((i) => i.path.join('.') + ': ' + i.message) };
};`,
  },
  {
    name: 'TypeBox 1',
    pkg: 'typebox',
    source: `
const { Type } = require('typebox');
const { Value } = require('typebox/value');
const ms = Type.Optional(Type.Number({ minimum: 1000, maximum: 604800000 }));
const schema = Type.Object({
  org: Type.String({ pattern: ${JSON.stringify(LOGIN.slice(1, -1))} }),
  repositories: Type.Array(Type.String({ pattern: ${JSON.stringify(REPO.slice(1, -1))} }), { maxItems: 100 }),
  lockRepositories: Type.Optional(Type.Boolean()),
  excludeReleases: Type.Optional(Type.Boolean()),
  apiCallTimeoutMs: ms,
  poll: Type.Optional(Type.Object({ initialIntervalMs: ms, maxIntervalMs: ms, backoffFactor: Type.Optional(Type.Number({ minimum: 1, maximum: 10 })), timeoutMs: ms })),
  outage: Type.Optional(Type.Object({ budgetMs: ms, initialBackoffMs: ms, maxBackoffMs: ms })),
  eventsPerRun: Type.Optional(Type.Integer({ minimum: 50, maximum: 8000 })),
});
exports.parse = (input) => {
  if (!Value.Check(schema, input)) return { ok: false, issues: [...Value.Errors(schema, input)].map((e) => (e.instancePath ?? e.path) + ': ' + e.message) };
  const p = input.poll;
  if (p && (p.maxIntervalMs ?? Infinity) < (p.initialIntervalMs ?? 0)) return { ok: false, issues: ['poll: maxIntervalMs must be at least initialIntervalMs'] };
  return { ok: true };
};`,
  },
];

const GOOD = { org: 'octo-org', repositories: ['alpha', 'beta'], lockRepositories: true, poll: { initialIntervalMs: 30_000, maxIntervalMs: 600_000 } };
const BAD = { org: '-bad-', repositories: ['alpha', '..x/'], poll: { initialIntervalMs: 60_000, maxIntervalMs: 1_000 } };

/** A workflow that parses its input with the candidate (or, for the baseline, only returns). */
function workflowSource(withSchema: boolean): string {
  return withSchema
    ? `const { parse } = require('./schema');\nexports.parseInput = async (input) => parse(input);\n`
    : `exports.parseInput = async (input) => ({ ok: typeof input === 'object' });\n`;
}

function installed(pkg: string): boolean {
  try {
    require.resolve(pkg);
    return true;
  } catch {
    return false;
  }
}

/** Median milliseconds to require the library and build the schema (plus one parse) in a fresh Node process. */
function coldStartMs(schemaFile: string, runs: number): number {
  const script = `const t0 = performance.now(); const s = require(${JSON.stringify(schemaFile)}); s.parse(${JSON.stringify(GOOD)}); process.stdout.write(String(performance.now() - t0));`;
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push(Number(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })));
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

/** The bundle's bytes as the worker loads it, and without its inline source map. */
async function bundleBytes(dir: string): Promise<{ bytes: number; codeBytes: number; code: string }> {
  const { code } = await bundleWorkflowCode({ workflowsPath: join(dir, 'workflows.js'), logger: new DefaultLogger('ERROR') });
  const withoutMap = code.replace(/\n\/\/# sourceMappingURL=data:[^\n]*/g, '');
  return { bytes: Buffer.byteLength(code), codeBytes: Buffer.byteLength(withoutMap), code };
}

async function main(): Promise<void> {
  const opts = new Command().option('--runs <n>', 'cold starts per candidate', '11').parse().opts<{ runs: string }>();
  const runs = Math.max(1, Number(opts.runs));
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  // Inside the repository so the candidates resolve from its node_modules.
  const root = await mkdtemp(resolve(__dirname, '.schema-'));
  try {
    const baseDir = join(root, 'baseline');
    execFileSync('mkdir', ['-p', baseDir]);
    await writeFile(join(baseDir, 'workflows.js'), workflowSource(false));
    const baseline = await bundleBytes(baseDir);
    const serverPath = await ensureTestServer((m) => console.error(`[test server] ${m}`));
    const env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: serverPath } } });
    const rows: string[][] = [];
    try {
      for (const c of CANDIDATES) {
        if (!installed(c.pkg)) {
          rows.push([c.name, 'not installed', '', '', '', '']);
          continue;
        }
        const dir = join(root, c.name.replace(/\W+/g, '-'));
        execFileSync('mkdir', ['-p', dir]);
        await writeFile(join(dir, 'schema.js'), c.source);
        await writeFile(join(dir, 'workflows.js'), workflowSource(true));
        const bundle = await bundleBytes(dir);
        const cold = coldStartMs(join(dir, 'schema.js'), runs);
        const sandbox = await runInSandbox(env, bundle.code, c.name);
        rows.push([c.name, kib(bundle.bytes - baseline.bytes), kib(bundle.codeBytes - baseline.codeBytes), `${cold.toFixed(1)} ms`, sandbox, versionOf(c.pkg)]);
      }
    } finally {
      await env.teardown();
    }
    console.log(`schema libraries: the org migration's input schema (baseline workflow bundle ${kib(baseline.bytes)}, ${kib(baseline.codeBytes)} without its source map; cold start = median of ${runs} fresh processes)\n`);
    const head = ['library', 'bundle +', 'code + (no map)', 'cold start', 'workflow sandbox', 'version'];
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    for (const r of [head, ...rows]) console.log(r.map((cell, i) => cell.padEnd(widths[i])).join('  '));
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** Runs the bundled workflow on a real worker: the good input must pass and the bad one be refused. */
async function runInSandbox(env: TestWorkflowEnvironment, code: string, name: string): Promise<string> {
  const taskQueue = `bench-schema-${name.replace(/\W+/g, '-')}`;
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: { code } });
  try {
    return await worker.runUntil(async () => {
      // The probe workflow exists only in the generated bundle above, so no function can name it.
      const run = (input: unknown, i: number) =>
        env.client.workflow.execute('parseInput', { taskQueue, workflowId: `${taskQueue}-${i}`, args: [input] }) as Promise<{ ok: boolean; issues?: string[] }>; // count-literals: allowed (generated probe)
      const good = await run(GOOD, 1);
      const bad = await run(BAD, 2);
      return good.ok && !bad.ok ? `runs (refused with ${bad.issues?.length} issues)` : `WRONG (good ${good.ok}, bad ${bad.ok})`;
    });
  } catch (err) {
    return `fails: ${(err as Error).message.split('\n')[0]}`;
  }
}

function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

function versionOf(pkg: string): string {
  const manifest = join(resolve(__dirname, '..'), 'node_modules', pkg, 'package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

main().catch((err: Error) => {
  console.error(`bench:schema: ${err.stack ?? err.message}`);
  process.exit(1);
});
