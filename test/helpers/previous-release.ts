/**
 * The previous release, checked out of git history into the cache, for the upgrade test: its source (`git
 * archive`), its own `npm ci`, its workflow bundle and its compiled `dist/` (`npm run build`: its `bin/longhaul.js`
 * then runs the compiled CLI, as an installed release does, instead of transpiling its source with tsx in every
 * process: about a third of the CPU per command), under `~/.cache/longhaul/releases/<sha>/`. Prepared once per
 * commit (the first run's `npm ci` and build take a minute or two; later runs find the directory ready), and
 * built in a directory of its own that is renamed into place at the end, so two test runs at once never see
 * a half-installed release.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { cacheDir } from '../../src/temporal/cli-binary';

const root = join(__dirname, '..', '..');

export interface PreviousRelease {
  /** The previous version's release commit. */
  sha: string;
  version: string;
  /** Its checkout, with its own node_modules. */
  dir: string;
  /** Its workflow bundle (`LONGHAUL_WORKFLOW_BUNDLE` for its workers). */
  bundlePath: string;
  /** Whether this run prepared it (false: found in the cache). */
  prepared: boolean;
}

const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
const versionAt = (rev: string) => (JSON.parse(git('show', `${rev}:package.json`)) as { version: string }).version;

/** Release commits CHANGELOG.md records, newest first: "Release commit: `<sha>`" under a version's heading. */
export function recordedReleases(changelog: string): { version: string; sha: string }[] {
  const releases: { version: string; sha: string }[] = [];
  let version: string | undefined;
  for (const line of changelog.split('\n')) {
    const heading = /^## \[(\d+\.\d+\.\d+)\]/.exec(line);
    if (heading) version = heading[1];
    else if (line.startsWith('## ')) version = undefined;
    const commit = /^Release commit: `([0-9a-f]{40})`/.exec(line);
    if (commit && version) releases.push({ version, sha: commit[1] });
  }
  return releases;
}

/**
 * The previous release: the newest release commit CHANGELOG.md records for a version other than HEAD's. A
 * release's commits keep its version until the next cycle bumps it, so "the last commit before the bump" is
 * the release only when the bump opens a cycle; the record says which commit shipped. Without a record, the
 * parent (along first parents) of the oldest commit since which package.json has carried HEAD's version.
 */
export function previousReleaseCommit(): { sha: string; version: string } {
  const head = versionAt('HEAD');
  const recorded = recordedReleases(git('show', 'HEAD:CHANGELOG.md')).find((r) => r.version !== head);
  if (recorded) {
    try {
      git('cat-file', '-e', `${recorded.sha}^{commit}`);
    } catch {
      const shallow = git('rev-parse', '--is-shallow-repository').trim() === 'true';
      throw new Error(`CHANGELOG.md names ${recorded.sha} as release ${recorded.version}, but this clone lacks that commit${shallow ? ' (shallow: git fetch --unshallow)' : ''}`);
    }
    const atCommit = versionAt(recorded.sha);
    if (atCommit !== recorded.version) throw new Error(`CHANGELOG.md names ${recorded.sha} as release ${recorded.version}, but its package.json says ${atCommit}`);
    return recorded;
  }
  const touching = git('rev-list', '--first-parent', 'HEAD', '--', 'package.json').split('\n').filter(Boolean);
  for (let i = 0; i < touching.length; i++) {
    const version = versionAt(touching[i]);
    if (version === head) continue;
    if (i === 0) throw new Error(`package.json at HEAD is ${head}, but its last change (${touching[0]}) says ${version}`);
    const sha = git('rev-parse', `${touching[i - 1]}^1`).trim();
    return { sha, version: versionAt(sha) };
  }
  const shallow = git('rev-parse', '--is-shallow-repository').trim() === 'true';
  throw new Error(`no commit has a package.json version other than ${head}: there is no previous release to upgrade from${shallow ? ' in this shallow clone (git fetch --unshallow)' : ''}`);
}

/** The previous release, ready to run (prepared into the cache when absent). */
export async function previousRelease(log: (m: string) => void): Promise<PreviousRelease> {
  const { sha, version } = previousReleaseCommit();
  const dir = join(cacheDir(), 'releases', sha);
  const bundlePath = join(dir, 'workflow-bundle.js');
  if (existsSync(join(dir, 'READY'))) {
    // A release prepared before the cache held its build: built once now, beside it.
    const unbuilt = !existsSync(join(dir, 'dist'));
    if (unbuilt) await buildRelease(dir, log);
    return { sha, version, dir, bundlePath, prepared: unbuilt };
  }

  const building = `${dir}.building-${process.pid}`;
  await rm(building, { recursive: true, force: true });
  await mkdir(building, { recursive: true });
  const started = Date.now();
  log(`preparing release ${version} (${sha.slice(0, 12)}) in ${dir}: git archive, npm ci, workflow bundle`);
  execFileSync('sh', ['-c', `git archive ${sha} | tar -x -C "${building}"`], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd: building, stdio: ['ignore', 'ignore', 'pipe'] });
  // The release's own `build:bundle` script: src/bundle.ts since 0.5.0, src/temporal/bundle.ts before.
  const bundleScript = ['src/bundle.ts', 'src/temporal/bundle.ts'].find((script) => existsSync(join(building, script))) ?? 'src/bundle.ts';
  execFileSync(process.execPath, ['--import', 'tsx', bundleScript, join(building, 'workflow-bundle.js')], { cwd: building, stdio: ['ignore', 'ignore', 'pipe'] });
  await buildRelease(building, log);
  execFileSync('touch', [join(building, 'READY')]);
  try {
    await rename(building, dir);
  } catch (err) {
    // Another run put the same release in place meanwhile: use that one.
    if (!existsSync(join(dir, 'READY'))) throw err;
    await rm(building, { recursive: true, force: true });
  }
  log(`release ${version} prepared in ${Math.round((Date.now() - started) / 1000)} s`);
  return { sha, version, dir, bundlePath, prepared: true };
}

/**
 * Compiles the release in `dir` into `dir/dist` (its `tsconfig.build.json`, as its `npm run build`), into a directory
 * of its own renamed into place, so a concurrent run sees no half-written build.
 */
async function buildRelease(dir: string, log: (m: string) => void): Promise<void> {
  const out = join(dir, `dist.building-${process.pid}`);
  const started = Date.now();
  await rm(out, { recursive: true, force: true });
  execFileSync(process.execPath, [join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json', '--outDir', out], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  // `bin/longhaul.js` runs dist/ only when it is not older than every source file.
  const now = new Date();
  await utimes(join(out, 'cli', 'program.js'), now, now);
  try {
    await rename(out, join(dir, 'dist'));
  } catch (err) {
    if (!existsSync(join(dir, 'dist'))) throw err;
    await rm(out, { recursive: true, force: true });
  }
  log(`release in ${dir} compiled in ${Math.round((Date.now() - started) / 1000)} s`);
}
