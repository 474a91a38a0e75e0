/**
 * Setup file of the projects whose files share their fork process (`isolate: false`, vitest.config.ts): it runs
 * again before each file. A file that sets environment variables (credentials an in-process worker reads by name,
 * a sink's secret, a store's endpoint) leaves the next file of its fork what it found: every variable is put back
 * as it was before the file, after its own `afterAll` hooks (hooks run in the reverse order of their
 * registration, and this one is registered first). Worker processes a later file starts inherit this process's
 * environment, so a leaked variable would reach them too.
 */
import { afterAll } from 'vitest';

const before = { ...process.env };

afterAll(() => {
  for (const name of Object.keys(process.env)) if (!(name in before)) delete process.env[name];
  for (const [name, value] of Object.entries(before)) if (process.env[name] !== value) process.env[name] = value;
});
