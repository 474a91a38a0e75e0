/** Where a file of the repository is in the compiled tree global setup built (`compiled-js.ts`). */
import { join, relative } from 'node:path';
import { inject } from 'vitest';

const root = join(__dirname, '..', '..');

/** `file` (an absolute `.ts` path in the repository) compiled: the `.js` a test's child process runs. */
export function compiled(file: string): string {
  return join(inject('compiledJsDir'), relative(root, file)).replace(/\.ts$/, '.js');
}
