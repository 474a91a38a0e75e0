/**
 * The Google operation model: poll bounds (the kit's stricter rules, plus the per-run event ceiling these
 * workflows rely on instead of continue-as-new), the one status description, and update recovery's match.
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_OPERATION_POLL,
  describeOperationStatus,
  EVENTS_PER_POLL,
  maxPollsPerRun,
  newOperationStatus,
  operationPollProblems,
} from '../../src/processes/google-operation/model';
import { bucketCreateProblems } from '../../src/processes/google-operation/input';
import { isSameBucketUpdate } from '../../src/processes/google-operation/activities/log-buckets';
import { MAX_EVENTS_PER_RUN } from '../../src/common/run-budget';
import { DEFAULT_OUTAGE } from '../../src/common/outage';

const HOUR = 60 * 60 * 1000;

describe('operationPollProblems', () => {
  it('accepts the defaults, whose worst case stays within the per-run event budget', () => {
    expect(operationPollProblems(undefined, undefined)).toEqual([]);
    const polls = maxPollsPerRun(DEFAULT_OPERATION_POLL, DEFAULT_OUTAGE);
    expect(polls * EVENTS_PER_POLL).toBeLessThan(MAX_EVENTS_PER_RUN);
  });

  it('requires maxIntervalMs ≥ initialIntervalMs (the check the Google copy lacked), also against the defaults', () => {
    expect(operationPollProblems({ initialIntervalMs: 5_000, maxIntervalMs: 2_000 }, undefined)).toEqual([
      'poll.maxIntervalMs (2000) must be at least poll.initialIntervalMs (5000)',
    ]);
    expect(operationPollProblems({ initialIntervalMs: 700_000 }, undefined)[0]).toContain('poll.maxIntervalMs (600000) must be at least');
  });

  it('refuses intervals under the 1 s floor and outage bounds out of range', () => {
    expect(operationPollProblems({ initialIntervalMs: 150 }, undefined)[0]).toContain('poll.initialIntervalMs must be between 1000');
    expect(operationPollProblems(undefined, { maxBackoffMs: 10 })[0]).toContain('outage.maxBackoffMs');
  });

  it('refuses bounds a single run could not finish within 10,000 events: a fixed 1 s poll for 12 hours', () => {
    const [problem] = operationPollProblems({ initialIntervalMs: 1_000, maxIntervalMs: 1_000, timeoutMs: 12 * HOUR }, undefined);
    expect(problem).toContain('per-run budget of 8000 history events');
    expect(operationPollProblems({ initialIntervalMs: 1_000, maxIntervalMs: 60_000, backoffFactor: 1.5, timeoutMs: 6 * HOUR }, undefined)).toEqual([]);
  });

  it('counts an outage polled every second against the run too', () => {
    expect(operationPollProblems({ timeoutMs: HOUR }, { initialBackoffMs: 1_000, maxBackoffMs: 1_000 })[0]).toContain('per-run budget');
  });

  it('reaches the input validation of every Google workflow, with the recovery grace checked too', () => {
    const problems = bucketCreateProblems({ parent: 'projects/demo-project/locations/global', bucketId: 'b', poll: { initialIntervalMs: 10 }, recoveryGraceMs: 5 });
    expect(problems).toHaveLength(2);
    expect(problems[1]).toContain('recoveryGraceMs');
  });
});

describe('describeOperationStatus', () => {
  it('gives the one line the UI and the CLI show, and the search attributes', () => {
    const status = { ...newOperationStatus('log-bucket-create', 'projects/p/locations/global/buckets/b'), phase: 'waiting' as const };
    Object.assign(status, { operation: 'projects/p/locations/global/operations/1', state: 'RUNNING', polls: 4, failedPolls: 2, failingPolls: 2, nextPollInMs: 20_000 });
    const view = describeOperationStatus(status);
    expect(view.line).toBe(
      'log-bucket-create projects/p/locations/global/buckets/b · phase: waiting · operation projects/p/locations/global/operations/1 · state: RUNNING · 4 polls (2 failed) · polls failing (2 in a row): waiting the outage out · next poll in 20 s',
    );
    expect(view.attributes).toEqual({ process: 'log-bucket-create', target: 'projects/p/locations/global/buckets/b', state: 'RUNNING' });
  });
});

describe('isSameBucketUpdate', () => {
  const name = 'projects/p/locations/global/buckets/b';
  const ours = { updateMask: ['retentionDays', 'description'], retentionDays: 90, description: 'kept' };
  it('matches the same bucket, mask (in any order) and values', () => {
    expect(isSameBucketUpdate({ name, updateMask: 'description,retentionDays', bucket: { retentionDays: 90, description: 'kept' } }, name, ours)).toBe(true);
  });
  it('refuses another bucket, another mask or other values', () => {
    expect(isSameBucketUpdate({ name: `${name}2`, updateMask: 'retentionDays,description', bucket: { retentionDays: 90, description: 'kept' } }, name, ours)).toBe(false);
    expect(isSameBucketUpdate({ name, updateMask: 'description', bucket: { description: 'kept' } }, name, ours)).toBe(false);
    expect(isSameBucketUpdate({ name, updateMask: 'retentionDays,description', bucket: { retentionDays: 30, description: 'kept' } }, name, ours)).toBe(false);
    expect(isSameBucketUpdate(undefined, name, ours)).toBe(false);
  });
});
