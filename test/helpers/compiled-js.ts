/**
 * The repository's TypeScript as plain JavaScript, for the processes the tests start (worker processes, the
 * `longhaul` command, the emulator, the children of `test/helpers/`): compiled once per test run, in global setup.
 *
 * Why: started with tsx's loader, each such process spent about twice the CPU of the compiled program before it
 * did anything (a worker process: 5.0 s against 3.0 s of CPU to poll; `longhaul --help`: 1.3 s against 0.6 s),
 * and the suite starts some 46 worker processes and 140 commands. On 2 cores that was about a sixth of the
 * suite's CPU. The compiled program is also what users run (`npm run build`, the Docker image).
 *
 * Test files find a compiled file with `compiled()` (`compiled-entry.ts`).
 *
 * How: esbuild transpiles file by file (what tsx does on the fly, so the code is the same), keeping the
 * repository's layout under one directory per run inside `node_modules/.cache/` (which Node resolves packages
 * from, and git and eslint leave alone):
 *   - `package.json`: a copy, which `src/release.ts` reads next to `src/`, as it does in the repository;
 *   - `node_modules/@longhaul/emulator`: the emulator workspace package's entry, pointed at its compiled source
 *     (the package's own entry picks its dist/, which a checkout has only after `npm run build`).
 */
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { build } from 'esbuild';
import { processAlive } from '../../src/common/process-alive';

const root = join(__dirname, '..', '..');

/** What gets compiled, relative to the repository: `test/helpers` holds the children tests start, and they use servers. */
const SOURCE_DIRS = ['src', join('packages', 'emulator', 'src'), join('test', 'helpers'), join('test', 'servers')];

/** The files under the source directories (absolute paths): TypeScript to compile, `.cjs` preloads to copy. */
async function sourceFiles(): Promise<{ typescript: string[]; commonjs: string[] }> {
  const files = (await Promise.all(SOURCE_DIRS.map((dir) => readdir(join(root, dir), { recursive: true, withFileTypes: true }))))
    .flat()
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
  return { typescript: files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')), commonjs: files.filter((f) => f.endsWith('.cjs')) };
}

const PREFIX = 'longhaul-test-js-';
/** The file in each compiled tree naming the test run's process (its global setup) that owns it. */
const OWNER = 'owner.pid';

/**
 * Removes the trees of runs that ended without their global teardown (killed): their owner is gone. A tree without
 * an owner file is one being written this moment (its owner writes the file first), so it is left alone.
 */
async function removeOrphans(cache: string): Promise<void> {
  for (const name of await readdir(cache)) {
    if (!name.startsWith(PREFIX)) continue;
    const owner = Number(await readFile(join(cache, name, OWNER), 'utf8').catch(() => ''));
    if (Number.isInteger(owner) && owner > 0 && !processAlive(owner)) await rm(join(cache, name), { recursive: true, force: true });
  }
}

/** Compiles the repository into a new directory and returns it (the repository's layout, `.js` for `.ts`). */
export async function compileForChildProcesses(): Promise<string> {
  const cache = join(root, 'node_modules', '.cache');
  await mkdir(cache, { recursive: true });
  await removeOrphans(cache);
  const out = await mkdtemp(join(cache, PREFIX));
  await writeFile(join(out, OWNER), String(process.pid));
  const { typescript, commonjs } = await sourceFiles();
  await build({
    entryPoints: typescript,
    outdir: out,
    outbase: root,
    bundle: false,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    // `import()` of a module of ours becomes `require()`, as TypeScript compiles it for CommonJS (Node's own
    // `import()` resolves like ES modules: no directory imports, no extension left out).
    supported: { 'dynamic-import': false },
    logLevel: 'error',
  });
  // `.cjs` helpers (preloads) are plain JavaScript already: copied as they are.
  for (const from of commonjs) await copyFile(from, join(out, relative(root, from)));
  await copyFile(join(root, 'package.json'), join(out, 'package.json'));
  const emulatorEntry = join(out, 'node_modules', '@longhaul', 'emulator');
  await mkdir(emulatorEntry, { recursive: true });
  await writeFile(join(emulatorEntry, 'index.js'), `module.exports = require(${JSON.stringify(join(out, 'packages', 'emulator', 'src', 'index.js'))});\n`);
  return out;
}

/** Removes what `compileForChildProcesses` wrote. */
export async function removeCompiled(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}
