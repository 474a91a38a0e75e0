/**
 * The failure registry (`src/common/failures.ts` and each process's `failures.ts`): one name and one handling per
 * failure type, which the HTTP core's decisions and the processes' failure names are the registry's own.
 */
import { describe, expect, it } from 'vitest';
import { allFailures, FAILURES, failureGroup, failureGroups, failureHandling, failureTypes, meansOutage, permanentTypes } from '../../src/common/failures';
import { PROCESSES } from '../../src/processes';
import { SINK_FAILURES } from '../../src/processes/feed-poll/failures';
import { decideNetworkRetry, decideRetry, githubRetryPolicy, PERMANENT_STATUSES } from '../../src/http/retry-policy';
import { googleRetryPolicy } from '../../src/http/google';
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { failureFacts } from '../../src/common/activity-failures';
import { outageCause } from '../../src/workflows/kit/outage-watch';

const ctx = { nowMs: Date.UTC(2026, 2, 1), attempt: 1 };

describe('the failure registry', () => {
  it('names every failure type once, across all groups: the layers\' and every process\'s', () => {
    const types = allFailures().map((f) => f.type);
    expect(new Set(types).size).toBe(types.length);
    const groups = [...Object.values(FAILURES), ...PROCESSES.flatMap((p) => p.failures ?? [])];
    expect(types.length).toBe(groups.reduce((n, group) => n + Object.keys(group).length, 0));
    expect(new Set(failureGroups().map((g) => g.specs))).toEqual(new Set(groups));
  });

  it('refuses a group or a type that is in the registry already', () => {
    expect(() => failureGroup('feed', 'another feed', { Other: { type: 'OtherFeedFailure', handling: 'permanent', meaning: '' } })).toThrow('failure group "feed" is defined twice');
    expect(() => failureGroup('sinks', 'another sink', { Unavailable: { type: 'SinkUnavailable', handling: 'permanent', meaning: '' } })).toThrow('failure type "SinkUnavailable" of group "sinks" is already in the registry');
    expect(failureHandling('SinkUnavailable')).toBe('back-off');
  });

  it("gives each group's names exactly the registry's types", () => {
    for (const { specs } of failureGroups()) {
      const names = failureTypes(specs);
      expect(Object.keys(names)).toEqual(Object.keys(specs));
      for (const [key, spec] of Object.entries(specs)) expect(names[key]).toBe(spec.type);
    }
  });

  it("lists a group's permanent types in its order", () => {
    expect(permanentTypes(SINK_FAILURES)).toEqual(['SinkSecretMissing', 'SinkRejected']);
  });

  it('counts back-off and outage failures as outages, and nothing else', () => {
    for (const spec of allFailures()) expect(meansOutage(spec.type)).toBe(spec.handling === 'back-off' || spec.handling === 'outage');
    expect(meansOutage('SomethingElse')).toBe(false);
    expect(failureHandling(undefined)).toBeUndefined();
  });

  it("agrees with the HTTP core's decisions: permanent statuses, rate limits as told, 5xx and resets backed off", () => {
    for (const type of Object.values(PERMANENT_STATUSES)) expect(failureHandling(type)).toBe('permanent');
    const limited = decideRetry({ status: 429, headers: { 'retry-after': '5' } }, ctx);
    const google = decideRetry({ status: 429, headers: {}, apiStatus: 'RESOURCE_EXHAUSTED' }, ctx, googleRetryPolicy);
    const server = decideRetry({ status: 502, headers: {} }, ctx);
    const network = decideNetworkRetry('socket hang up', ctx);
    expect([limited, google, server, network].map((d) => (d.kind === 'success' ? undefined : failureHandling(d.type)))).toEqual(['wait-as-told', 'wait-as-told', 'back-off', 'back-off']);
    const spent = { ...ctx, attempt: githubRetryPolicy.maxTransientAttempts };
    const gaveUp = [decideRetry({ status: 502, headers: {} }, spent), decideRetry({ status: 429, headers: {} }, { ...ctx, attempt: githubRetryPolicy.maxRateLimitAttempts })];
    expect(gaveUp.map((d) => (d.kind === 'permanent' ? failureHandling(d.type) : d.kind))).toEqual(['outage', 'outage']);
  });

  it('decides "transient or permanent" one way: failureFacts and the outage watch agree on every type', () => {
    for (const spec of allFailures()) {
      const failed = new ActivityFailure('activity failed', 'fetchFeedPage', '1', RetryState.NON_RETRYABLE_FAILURE, undefined, ApplicationFailure.nonRetryable('failed', spec.type));
      const permanent = failureFacts(failed).kind === 'permanent';
      expect(permanent, spec.type).toBe(!meansOutage(spec.type));
      // UnexpectedResponseError asks `patched()` (runs that began waiting it out go on doing so): workflow code only.
      if (spec.type !== FAILURES.http.UnexpectedResponse.type) expect(outageCause(failed) === undefined, spec.type).toBe(permanent);
    }
  });
});
