#!/usr/bin/env node
/**
 * The `longhaul` command (package.json `bin`): runs the compiled CLI in dist/ (`npm run build`, which compiles
 * the emulator package's dist/ too) when both are there and not older than any source file; otherwise the
 * TypeScript source with tsx's loader (a checkout after `npm install`, or one edited or pulled since the
 * build), so `npx longhaul …` works in this repository
 * without a build step and never runs code older than the checkout.
 */
'use strict';
const { spawn } = require('node:child_process');
const { readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');

const root = join(__dirname, '..');
const mtime = (path) => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
};

/** The newest modification time of the files under `dir` (undefined when there is none). */
const newest = (dir) => {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return undefined;
  }
  let latest;
  for (const entry of entries) {
    const path = join(dir, entry.name);
    const at = entry.isDirectory() ? newest(path) : mtime(path);
    if (at !== undefined && (latest === undefined || at > latest)) latest = at;
  }
  return latest;
};

// All of src/, not only the CLI's entry, and the emulator package's source (the compiled CLI loads its dist/):
// an edit or a `git pull` anywhere after a build makes the build stale. Walked only when there is a build to judge.
const emulator = join(root, 'packages', 'emulator');
const builds = [mtime(join(root, 'dist', 'cli', 'program.js')), mtime(join(emulator, 'dist', 'index.js'))];
const compiled = builds.includes(undefined) ? undefined : Math.min(...builds);
const sources = compiled === undefined ? [] : [newest(join(root, 'src')), newest(join(emulator, 'src'))].filter((t) => t !== undefined);
const source = sources.length === 0 ? undefined : Math.max(...sources);
if (compiled !== undefined && (source === undefined || compiled >= source)) {
  require(join(root, 'dist', 'cli', 'program.js'))
    .runCli(process.argv)
    .then((code) => process.exit(code));
} else {
  // tsx's loader by absolute URL: `--import tsx` would resolve from the caller's directory, not this package.
  const loader = pathToFileURL(require.resolve('tsx', { paths: [root] })).href;
  const child = spawn(process.execPath, ['--import', loader, join(root, 'src', 'main.ts'), ...process.argv.slice(2)], { stdio: 'inherit' });
  // Ctrl-C reaches the child through the terminal; this process stays until the child has cleaned up.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + 2 : 5)));
}
