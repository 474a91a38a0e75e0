/**
 * Every failure the archive module raises, built from the one failure registry (`src/common/failures.ts`): the
 * registry's handling decides whether Temporal retries it (`permanent` is non-retryable, every other handling is
 * retryable), so no throw site can make retryable what the registry calls permanent, or the other way round.
 * `test/unit/archive-failures.test.ts` holds the module to it: no other way of building a failure in
 * `src/archive/`.
 */
import { ApplicationFailure } from '@temporalio/common';
import { FAILURES, type FailureSpec } from '../../common/failures';

/** The registry's groups the archive raises: its own, the object stores', and the HTTP core's (an answer's kind). */
type Groups = Pick<typeof FAILURES, 'archive' | 'objectStore' | 'http'>;

export function storageFailure<G extends keyof Groups>(
  group: G,
  key: keyof Groups[G],
  message: string,
  opts: { details?: unknown[]; cause?: unknown } = {},
): ApplicationFailure {
  const spec = FAILURES[group][key] as FailureSpec;
  return ApplicationFailure.create({
    message,
    type: spec.type,
    nonRetryable: spec.handling === 'permanent',
    ...(opts.details ? { details: opts.details } : {}),
    ...(opts.cause !== undefined ? { cause: opts.cause as Error } : {}),
  });
}
