/**
 * The checking layer (issue 13, parse don't trust): whole-body checks the HTTP core makes on every success,
 * and the per-call shape checks activities make, both ending in a `MalformedAnswer` failure that names the
 * call and what was wrong.
 */
import { describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import { answerProblem, expectList, expectShape, MALFORMED_ANSWER, MALFORMED_ATTEMPTS, malformedAnswerFailure, shapeProblems } from '../../src/http/answer';
import { MIGRATION_SHAPE } from '../../src/processes/org-migration/activities';
import type { ApiResponse } from '../../src/http/api-client';

const response = (body: unknown, status = 201): ApiResponse<unknown> => ({ status, headers: {}, body, url: 'https://api.example.com/orgs/o/migrations?x=1', notModified: false });
const migration = { id: 7, guid: 'g-1', state: 'pending', created_at: '2026-01-01T00:00:00Z', lock_repositories: true, repositories: [] };

function thrown(fn: () => unknown): ApplicationFailure {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApplicationFailure);
    return err as ApplicationFailure;
  }
  throw new Error('expected a failure');
}

describe('answerProblem (whole body)', () => {
  it('accepts JSON labelled JSON (vendor types too) and empty bodies', () => {
    expect(answerProblem('application/json; charset=utf-8', '{"a":1}', { a: 1 })).toBeUndefined();
    expect(answerProblem('application/vnd.github+json', '[]', [])).toBeUndefined();
    expect(answerProblem(undefined, '', undefined)).toBeUndefined();
  });

  it('refuses an HTML page with a success status, saying it looks like a proxy page', () => {
    expect(answerProblem('text/html; charset=utf-8', '<!DOCTYPE html><html>', '<!DOCTYPE html><html>')).toBe('content type "text/html; charset=utf-8", not JSON (an HTML page: a proxy or sign-in page?)');
  });

  it('refuses JSON under another content type, and a missing content type', () => {
    expect(answerProblem('text/plain', '{"id":1}', { id: 1 })).toBe('content type "text/plain", not JSON');
    expect(answerProblem(undefined, '{"id":1}', { id: 1 })).toBe('content type missing, not JSON');
  });

  it('refuses truncated JSON (the parser left the text as a string)', () => {
    expect(answerProblem('application/json', '{"id":7,"gu', '{"id":7,"gu')).toBe('the body is not valid JSON (11 bytes, truncated?)');
  });
});

describe('shape checks', () => {
  it('passes a documented migration and names each missing or mistyped field', () => {
    expect(shapeProblems(migration, MIGRATION_SHAPE)).toEqual([]);
    const { id: _id, ...noId } = migration;
    expect(shapeProblems(noId, MIGRATION_SHAPE)).toEqual(['the body has no id']);
    expect(shapeProblems({ ...migration, id: '7', lock_repositories: 'yes' }, MIGRATION_SHAPE)).toEqual([
      `the body's id is a string "7", not an integer`,
      `the body's lock_repositories is a string "yes", not a boolean`,
    ]);
    expect(shapeProblems({ ...migration, id: 1.5 }, MIGRATION_SHAPE)).toEqual(["the body's id is number 1.5, not an integer"]);
    expect(shapeProblems(null, MIGRATION_SHAPE)).toEqual(['the body is null, not an object']);
  });

  it('optional fields may be absent or null, required ones may not be null', () => {
    expect(shapeProblems({ ...migration, lock_repositories: null, repositories: undefined }, MIGRATION_SHAPE)).toEqual([]);
    expect(shapeProblems({ ...migration, guid: null }, MIGRATION_SHAPE)).toEqual(['the body has no guid']);
  });

  it('expectShape returns the body or throws MalformedAnswer naming the call (query left out) and the status', () => {
    expect(expectShape(response(migration), 'POST', MIGRATION_SHAPE)).toBe(migration);
    const failure = thrown(() => expectShape(response({ ...migration, id: undefined }), 'POST', MIGRATION_SHAPE));
    expect(failure.type).toBe(MALFORMED_ANSWER);
    expect(failure.message).toBe('POST https://api.example.com/orgs/o/migrations: malformed answer: 201: the body has no id');
    expect(failure.nonRetryable).toBe(false);
  });

  it('expectList checks every item and names at most three problems', () => {
    expect(expectList(response([migration, migration], 200), 'GET', MIGRATION_SHAPE)).toHaveLength(2);
    expect(thrown(() => expectList(response({ items: [] }, 200), 'GET', MIGRATION_SHAPE)).message).toContain('the body is an object, not an array');
    const bad = Array.from({ length: 5 }, () => ({ ...migration, guid: 1 }));
    const failure = thrown(() => expectList(response(bad, 200), 'GET', MIGRATION_SHAPE));
    expect(failure.message).toContain("item 0's guid is number 1, not a string");
    expect(failure.message).toContain('… (2 more)');
  });

  it('becomes non-retryable once the attempt budget is spent', () => {
    const call = { method: 'GET', url: 'https://api.example.com/x' };
    expect(malformedAnswerFailure(call, 'p', MALFORMED_ATTEMPTS - 1).nonRetryable).toBe(false);
    expect(malformedAnswerFailure(call, 'p', MALFORMED_ATTEMPTS).nonRetryable).toBe(true);
  });
});
