/** Validation of the rate governor's `acquire` Update (`rate-governor.ts`), kept apart from its decisions. */
import type { AcquireRequest } from './rate-governor';

/** Checks an Update's input (the workflow's validator): bad input is refused before it reaches history. */
export function acquireRequestProblems(req: unknown): string[] {
  const r = req as Partial<AcquireRequest> | undefined;
  const problems: string[] = [];
  if (!r || typeof r !== 'object') return ['request must be an object'];
  if (typeof r.workerId !== 'string' || !r.workerId) problems.push('workerId must be a non-empty string');
  if (r.kind !== 'read' && r.kind !== 'mutation' && r.kind !== 'content') problems.push('kind must be read, mutation or content');
  if (!Number.isInteger(r.count) || (r.count as number) < 1 || (r.count as number) > 1000) problems.push('count must be an integer 1..1000');
  for (const key of ['leadMs', 'maxWaitMs'] as const) {
    const v = r[key];
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < 0)) problems.push(`${key} must be a non-negative number`);
  }
  return problems;
}
