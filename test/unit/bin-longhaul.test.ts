/**
 * `bin/longhaul.js` chooses between the compiled CLI in dist/ and the TypeScript source: dist/ only while it and
 * the emulator package's dist/ (which the compiled CLI loads) are there and not older than any file under src/ or
 * the package's src/ (an edit or a `git pull` after a build must not run the old code).
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const repo = join(__dirname, '..', '..');

describe('bin/longhaul.js', () => {
  let root: string;

  beforeEach(async () => {
    // A checkout in miniature: the real bin script, tsx from this repository, a stand-in CLI on each side.
    root = await mkdtemp(join(tmpdir(), 'longhaul-bin-'));
    await mkdir(join(root, 'bin'));
    await copyFile(join(repo, 'bin', 'longhaul.js'), join(root, 'bin', 'longhaul.js'));
    await symlink(join(repo, 'node_modules'), join(root, 'node_modules'));
    await mkdir(join(root, 'src', 'cli'), { recursive: true });
    await mkdir(join(root, 'src', 'processes', 'org-migration', 'activities'), { recursive: true });
    await writeFile(join(root, 'src', 'main.ts'), "console.log('source');\n");
    await writeFile(join(root, 'src', 'cli', 'program.ts'), 'export {};\n');
    await writeFile(join(root, 'src', 'processes', 'org-migration', 'activities', 'archive-download.ts'), 'export {};\n');
    await mkdir(join(root, 'dist', 'cli'), { recursive: true });
    await writeFile(join(root, 'dist', 'cli', 'program.js'), "exports.runCli = async () => (console.log('compiled'), 0);\n");
    await mkdir(join(root, 'packages', 'emulator', 'src'), { recursive: true });
    await mkdir(join(root, 'packages', 'emulator', 'dist'), { recursive: true });
    await writeFile(join(root, 'packages', 'emulator', 'src', 'index.ts'), 'export {};\n');
    await writeFile(join(root, 'packages', 'emulator', 'dist', 'index.js'), '');
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const setTime = (path: string, at: Date) => utimes(join(root, path), at, at);
  const longhaul = async () => (await run(process.execPath, [join(root, 'bin', 'longhaul.js')])).stdout.trim();

  const SOURCES = ['src/main.ts', 'src/cli/program.ts', 'src/processes/org-migration/activities/archive-download.ts', 'packages/emulator/src/index.ts'];
  const BUILDS = ['dist/cli/program.js', 'packages/emulator/dist/index.js'];
  /** Every source written on day 1, every build on day 2; then `edited` written on day 3. */
  const builtThenEdited = async (edited?: string) => {
    for (const file of SOURCES) await setTime(file, new Date('2026-01-01T00:00:00Z'));
    for (const file of BUILDS) await setTime(file, new Date('2026-01-02T00:00:00Z'));
    if (edited) await setTime(edited, new Date('2026-01-03T00:00:00Z'));
  };

  it('runs dist/ when it is newer than every source file', async () => {
    await builtThenEdited();
    expect(await longhaul()).toBe('compiled');
  });

  it("runs the source when the emulator package's source changed after the build", async () => {
    await builtThenEdited('packages/emulator/src/index.ts');
    expect(await longhaul()).toBe('source');
  });

  it('runs the source when the emulator package has no build (the compiled CLI could not load it)', async () => {
    await builtThenEdited();
    await rm(join(root, 'packages', 'emulator', 'dist'), { recursive: true });
    expect(await longhaul()).toBe('source');
  });

  it('runs the source when any file under src/ changed after the build, not only the CLI entry', async () => {
    await builtThenEdited('src/processes/org-migration/activities/archive-download.ts');
    expect(await longhaul()).toBe('source');
  });

  it('runs the source when there is no build', async () => {
    await rm(join(root, 'dist'), { recursive: true });
    expect(await longhaul()).toBe('source');
  });
});
