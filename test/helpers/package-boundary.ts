/**
 * What a workspace package imports that it may not: a relative path leaving the package's folder (longhaul's
 * `src/`, a test helper…), an absolute path, or a package its own package.json does not declare (Node's
 * built-ins aside). Every import form counts — `import`, `import type`, `export … from`, `require()`,
 * `import()` — as TypeScript's own pre-processor finds them.
 */
import { readdir, readFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

export interface BoundaryViolation {
  /** The importing file, relative to the package. */
  file: string;
  specifier: string;
  reason: string;
}

const SOURCE = /\.(?:[cm]?[jt]s)$/;
const SKIPPED = new Set(['node_modules', 'dist']);

async function sourceFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED.has(entry.name)) found.push(...(await sourceFiles(path)));
    } else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) {
      found.push(path);
    }
  }
  return found;
}

/** The package a bare specifier names: `valibot`, `@scope/name` (a subpath `pkg/sub` is `pkg`). */
function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

export async function boundaryViolations(packageDir: string): Promise<{ files: number; imports: number; violations: BoundaryViolation[] }> {
  const root = resolve(packageDir);
  const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { name?: string; dependencies?: Record<string, string> };
  const declared = new Set(Object.keys(manifest.dependencies ?? {}));
  const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
  const files = await sourceFiles(root);
  const violations: BoundaryViolation[] = [];
  let imports = 0;
  for (const path of files) {
    const file = relative(root, path);
    for (const { fileName: specifier } of ts.preProcessFile(await readFile(path, 'utf8'), true, true).importedFiles) {
      imports++;
      if (isAbsolute(specifier)) {
        violations.push({ file, specifier, reason: 'an absolute path' });
      } else if (specifier.startsWith('.')) {
        const target = resolve(dirname(path), specifier);
        if (target !== root && !target.startsWith(root + sep)) violations.push({ file, specifier, reason: `leaves the package (${relative(root, target)})` });
      } else if (!builtins.has(specifier) && !builtins.has(packageName(specifier)) && !declared.has(packageName(specifier)) && packageName(specifier) !== manifest.name) {
        violations.push({ file, specifier, reason: `${packageName(specifier)} is not among the package's dependencies` });
      }
    }
  }
  return { files: files.length, imports, violations };
}
