/**
 * Issue 13, parse don't trust, for the source import's lists: the authors to map and the large files found.
 * A body that is not such a list is a `MalformedAnswer` naming the call, never read as "none" (an empty
 * author list would skip the mapping; an empty large-file list would skip the LFS decision).
 */
import { describe, expect, it } from 'vitest';
import { createImportActivities } from '../../src/processes/source-import/activities';
import type { ActivityDeps } from '../../src/activities/context';
import type { ApiClient, ApiResponse } from '../../src/http/api-client';
import { MALFORMED_ANSWER } from '../../src/http/answer';
import { failureOf } from '../helpers/failures';

const BASE = 'https://api.example.test/repos/o/r/import';
const authorBody = { id: 3, remote_id: 'svn:ann', remote_name: 'ann', email: 'ann@example.test', name: 'Ann', url: `${BASE}/authors/3` };
const largeFileBody = { ref_name: 'refs/heads/main', path: 'big.bin', oid: 'a'.repeat(40), size: 104_857_601 };

/** Activities whose GitHub client answers every call with `body` (status 200), as a misbehaving server might. */
function activitiesAnswering(body: unknown) {
  const github = {
    request: async (req: { path: string }): Promise<ApiResponse<unknown>> => ({ status: 200, headers: {}, body, url: `https://api.example.test${req.path}?since=0`, notModified: false }),
  } as unknown as ApiClient;
  return createImportActivities({ github } as unknown as ActivityDeps);
}


describe('source import author and large-file lists are checked (issue 13)', () => {
  it('well-formed lists are read as documented', async () => {
    expect(await activitiesAnswering([authorBody]).listImportAuthors({ owner: 'o', repo: 'r' })).toEqual([
      { id: 3, remoteId: 'svn:ann', remoteName: 'ann', name: 'Ann', email: 'ann@example.test' },
    ]);
    expect(await activitiesAnswering([]).listImportAuthors({ owner: 'o', repo: 'r' })).toEqual([]);
    expect(await activitiesAnswering([largeFileBody]).listImportLargeFiles({ owner: 'o', repo: 'r' })).toEqual([
      { refName: 'refs/heads/main', path: 'big.bin', oid: 'a'.repeat(40), size: 104_857_601 },
    ]);
  });

  it.each<[string, unknown, string]>([
    ['an object instead of a list (an error page parsed as JSON)', { message: 'Server Error' }, '200: the body is an object, not an array'],
    ['a string (truncated JSON left unparsed)', '[{"id":3,"remo', '200: the body is a string "[{\\"id\\":3,\\"remo", not an array'],
    ['an author without id', [{ ...authorBody, id: undefined }], '200: item 0 has no id'],
    ['an author whose email is not a string', [authorBody, { ...authorBody, id: 4, email: 7 }], "200: item 1's email is number 7, not a string"],
  ])('authors answered with %s: MalformedAnswer naming the call, not an empty list', async (_name, body, problem) => {
    const failure = await failureOf(activitiesAnswering(body).listImportAuthors({ owner: 'o', repo: 'r', since: 0 }));
    expect(failure.type).toBe(MALFORMED_ANSWER);
    expect(failure.message).toBe(`GET ${BASE}/authors: malformed answer: ${problem}`);
  });

  it.each<[string, unknown, string]>([
    ['an object instead of a list', { files: [] }, '200: the body is an object, not an array'],
    ['a file without oid', [{ ...largeFileBody, oid: undefined }], '200: item 0 has no oid'],
    ['a size that is not an integer', [{ ...largeFileBody, size: '100 MB' }], `200: item 0's size is a string "100 MB", not an integer`],
  ])('large files answered with %s: MalformedAnswer naming the call, not "no large files"', async (_name, body, problem) => {
    const failure = await failureOf(activitiesAnswering(body).listImportLargeFiles({ owner: 'o', repo: 'r' }));
    expect(failure.type).toBe(MALFORMED_ANSWER);
    expect(failure.message).toBe(`GET ${BASE}/large_files: malformed answer: ${problem}`);
  });

  it('a mapped author answered without its fields is MalformedAnswer, not an author of undefineds', async () => {
    const failure = await failureOf(activitiesAnswering({ id: 3 }).mapImportAuthor({ owner: 'o', repo: 'r', authorId: 3, name: 'Ann', email: 'ann@example.test' }));
    expect(failure.type).toBe(MALFORMED_ANSWER);
    expect(failure.message).toContain(`PATCH ${BASE}/authors/3: malformed answer: 200: the body has no remote_id`);
  });
});
