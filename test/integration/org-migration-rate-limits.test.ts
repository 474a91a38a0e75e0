/**
 * Many concurrent org migrations against an emulator with rate-limit windows of seconds: every workflow
 * finishes, the waits are the ones the responses asked for, and the worker sends NOTHING while it knows it is
 * limited (the requests that get a real integration banned). Judged per send, on the stack's clock (the emulator's
 * and the HTTP client's): each request the worker's undici put on the wire (`sent-here.ts`) against the answers
 * its GitHub client had read by then that closed its rate-limit gate (an `ApiObserver`'s `gateClosedUntilMs`). A
 * request already on its way when the limiting answer was read is no fault, however long the machine took.
 */
import { describe, expect, it } from 'vitest';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import type { EmulatorOptions } from '@longhaul/emulator';
import { defaultGithubFixture, type GithubFixture } from '../../packages/emulator/src/github/fixture';
import { FailureType, githubRetryPolicy, type RetryPolicy } from '../../src/http/retry-policy';
import type { ApiObserver } from '../../src/http/observer';
import { useStackPerTest, type TestStack } from '../helpers/stack';
import { sendsWhileKnown, type LimitLearned } from '../helpers/fleet-news';
import { recordSendsHere } from '../helpers/sent-here';
import { demandedWaits, type DemandedWait } from '../helpers/history';
import { FAST_POLL } from '../helpers/presets';

const WORKFLOWS = 8;
const REPOS_EACH = 2;
/** Workflows start this far apart and their exports take 1–4 s, so requests keep coming while a limit holds. */
const STAGGER_MS = 200;

/** The README fixture plus enough repositories that every workflow locks its own. */
function fixtureWithRepos(count: number): GithubFixture {
  const fixture = defaultGithubFixture();
  for (let i = 0; i < count; i++) fixture.repositories.push({ id: 5000 + i, name: `repo-${i}`, owner: 'octo-org', private: false, workflowsEnabled: false });
  return fixture;
}

const startStack = useStackPerTest({ timeSkipping: true });

async function runMany(options: EmulatorOptions, policy?: RetryPolicy) {
  // Every answer that closed the gate, when the client read it (the stack's clock, set once the stack runs).
  let now: () => number = Date.now;
  const gateClosed: LimitLearned[] = [];
  // Every request the client admitted past its gate's last check, as undici wrote it (the same clock): what the
  // worker sent knowing what it knew.
  const admitted: { at: number; method: string; path: string }[] = [];
  const githubObserver: ApiObserver = {
    observe: (o) => {
      if (o.kind === 'answer' && o.gateClosedUntilMs !== undefined) gateClosed.push({ at: now(), until: o.gateClosedUntilMs, source: 'answer' });
      if (o.kind === 'admitted') admitted.push({ at: now(), method: o.method, path: o.path });
    },
  };
  const stack = await startStack({
    emulator: { fixture: fixtureWithRepos(WORKFLOWS * REPOS_EACH), migrations: { exportMs: [1_000, 4_000], archiveBytes: 4_096 }, ...options },
    deps: { policy, githubObserver },
  });
  now = stack.clock.now;
  const sent = recordSendsHere(new URL(stack.emulator.apiUrl).origin, stack.clock.now);
  try {
    return { ...(await startAndAwait(stack)), sent: sent.sends, admitted, gateClosed };
  } finally {
    sent.stop();
  }
}

async function startAndAwait(stack: TestStack) {
  const started = Date.now();
  const handles = await Promise.all(
    Array.from({ length: WORKFLOWS }, async (_, w) => {
      await new Promise((r) => setTimeout(r, w * STAGGER_MS));
      return stack.client.workflow.start(orgMigration, {
        taskQueue: stack.taskQueue,
        workflowId: `migration-limited-${w}-${started}`,
        args: [
          {
            org: 'octo-org',
            repositories: Array.from({ length: REPOS_EACH }, (_, r) => `repo-${w * REPOS_EACH + r}`),
            lockRepositories: true,
            poll: FAST_POLL,
          },
        ],
      });
    }),
  );
  const results = await Promise.all(handles.map((h) => h.result()));
  return { handles, results, stats: stack.emulator.stats, windows: Object.values(stack.emulator.rateLimiter.fleetStats()).flatMap((c) => c.windows) };
}

type Run = Awaited<ReturnType<typeof runMany>>;

/**
 * Nothing sent while the worker knew it was limited: no request admitted past the gate after an answer closed it
 * and before the end that answer gave. Every request the emulator saw was admitted and is on the wire record, and
 * the gate did close.
 * The emulator's old count (arrivals more than 250 ms after the limiting answer) is printed, not asserted.
 */
function expectNothingSentWhileKnownLimited(run: Run, what: string): void {
  expect(run.sent).toHaveLength(run.stats.requests);
  expect(run.admitted).toHaveLength(run.stats.requests);
  expect(run.gateClosed.length).toBeGreaterThan(0);
  expect(sendsWhileKnown(run.admitted, run.gateClosed)).toEqual([]);
  console.log(`${what}: ${run.sent.length} requests, the gate closed ${run.gateClosed.length} times; arrived by the API's clock while limited, beyond 250 ms: ${run.stats.requestsWhileLimited}`);
}

/** Every workflow finished, secondary limits were hit, nothing was sent while limited: the waits observed. */
async function secondaryWaitsOfCompliantRun(run: Run, what: string): Promise<DemandedWait[]> {
  expect(run.results).toHaveLength(WORKFLOWS);
  expect(run.stats.rateLimited.secondary).toBeGreaterThan(0);
  expectNothingSentWhileKnownLimited(run, what);
  const waits = (await demandedWaits(run.handles, { failedAttempts: true })).filter((w) => w.type === FailureType.SecondaryRateLimit);
  expect(waits.length).toBeGreaterThan(0);
  return waits;
}

describe('org migrations under rate limits', () => {
  it('waits for the primary window to reset and sends nothing while it is spent', async () => {
    // A window long enough that the run spends it whatever the machine's speed (a 3 s window went by unspent twice
    // on a loaded machine); on the time-skipping environment's clock, waiting for its reset costs no wall time.
    const windowMs = 30_000;
    const limit = 20;
    const run = await runMany({ rateLimit: { limit, windowMs } });
    const { handles, results, stats, windows } = run;

    expect(results).toHaveLength(WORKFLOWS);
    for (const r of results) expect(r.unlockedRepositories).toHaveLength(REPOS_EACH);
    // More requests than one window allows, and a window spent to its last request with traffic going on in a
    // later one: the limit was really in play…
    expect(stats.requests).toBeGreaterThan(limit);
    expect(windows.some((w) => w.used === limit)).toBe(true);
    expect(windows.length).toBeGreaterThan(1);
    // …and nothing reached the server while the caller had been told to wait, nor beyond a window's limit.
    expectNothingSentWhileKnownLimited(run, 'primary');
    for (const w of windows) expect(w.used).toBeLessThanOrEqual(limit);

    // Whether a wait shows as a limited answer the run waited out (a failed attempt) or as a wait before sending
    // (the last answer said `remaining: 0`) depends on how the requests interleave, which a loaded machine changes;
    // either way it runs to the reset (at most a window, plus the margin and the Date header's second resolution).
    const waits = (await demandedWaits(handles, { failedAttempts: true })).filter((w) => w.type === FailureType.PrimaryRateLimit);
    for (const w of waits) {
      expect(w.requestedMs).toBeGreaterThan(0);
      expect(w.requestedMs).toBeLessThanOrEqual(windowMs + githubRetryPolicy.resetMarginMs + 1_000);
    }
  });

  it('waits for retry-after on secondary limits and sends nothing before it passes', async () => {
    const windowMs = 2_000;
    const waits = await secondaryWaitsOfCompliantRun(await runMany({ rateLimit: { secondary: { pointsPerWindow: 25, windowMs, retryAfter: true, status: 403 } } }), 'secondary, retry-after');
    // retry-after is whole seconds until the endpoint's window frees.
    for (const w of waits) {
      expect(w.requestedMs % 1000).toBe(0);
      expect(w.requestedMs).toBeLessThanOrEqual(windowMs);
    }
  });

  it('backs off at least the policy minimum on secondary limits without retry-after (429), growing with the attempt', async () => {
    const minDelayMs = 1_500;
    const policy: RetryPolicy = { ...githubRetryPolicy, rateLimitBackoff: { ...githubRetryPolicy.rateLimitBackoff, initialMs: minDelayMs } };
    const waits = await secondaryWaitsOfCompliantRun(
      await runMany({ rateLimit: { secondary: { pointsPerWindow: 25, windowMs: 1_500, retryAfter: false, status: 429, waitWithoutRetryAfterMs: minDelayMs } } }, policy),
      'secondary, 429 without retry-after',
    );
    for (const w of waits) {
      // minDelay × 2^(attempt − 1): a power-of-two multiple of the minimum.
      const multiple = w.requestedMs / minDelayMs;
      expect(Number.isInteger(Math.log2(multiple))).toBe(true);
    }
  });
});
