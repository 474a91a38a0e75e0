/**
 * The disk half of "files stay in the data directory" (the deterministic half is `common/data-paths.ts`): a path
 * from input is resolved under the worker's data directory with every link followed, and refused unless it stays
 * inside. Activities call it before they create or write anything. A link inside the data directory that points
 * out (`feeds -> /etc`) is what this catches and the workflow's check cannot: only the worker's disk knows it.
 */
import { lstat, mkdir, readlink, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { dataPathProblem, pathOutsideDataDir } from '../common/data-paths';

/** Links followed before giving up (a loop of dangling links): the kernel's own limit. */
const MAX_LINKS = 40;

/**
 * Where `path` really leads: the real path of its deepest existing ancestor, and what is left below it. A dangling
 * link is followed to where it points (writing through it would create the file there).
 */
async function realTarget(path: string): Promise<string> {
  const missing: string[] = [];
  let at = path;
  for (let links = 0; ; ) {
    try {
      return join(await realpath(at), ...[...missing].reverse());
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
      const link = await lstat(at).then((stats) => stats.isSymbolicLink(), () => false);
      if (link && links++ < MAX_LINKS) {
        at = resolve(dirname(at), await readlink(at));
        continue;
      }
      const parent = dirname(at);
      if (parent === at) throw err;
      missing.push(at.slice(parent.length).replace(/^[/\\]+/, ''));
      at = parent;
    }
  }
}

/**
 * The absolute path `path` (from the input's `field`) names under `dataDir`, after checking that it is relative,
 * does not climb with `..`, and that no link on the way (nor the file itself, if it is a link) leads outside the
 * data directory. Throws `PathOutsideDataDir` (permanent) otherwise; nothing is created but the data directory.
 */
export async function pathInDataDir(dataDir: string, path: string, field: string): Promise<string> {
  const problem = dataPathProblem(path, field);
  if (problem) throw pathOutsideDataDir(problem, field);
  await mkdir(dataDir, { recursive: true });
  const root = await realpath(dataDir);
  const target = resolve(root, path);
  const real = await realTarget(target);
  const inside = relative(root, real);
  if (inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) {
    throw pathOutsideDataDir(`${field} ${JSON.stringify(path)} leads outside the worker's data directory (a link on the way points elsewhere)`, field);
  }
  return target;
}
