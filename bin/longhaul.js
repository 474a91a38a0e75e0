#!/usr/bin/env node
/**
 * The `longhaul` command (package.json `bin`): runs the compiled CLI in dist/ (`npm run build`) when it is
 * there and not older than any source file; otherwise the TypeScript source with tsx's loader (a checkout
 * after `npm install`, or one edited or pulled since the build), so `npx longhaul …` works in this repository
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

// All of src/, not only the CLI's entry: an edit or a `git pull` anywhere after a build makes dist/ stale.
// Walked only when there is a build to judge.
const compiled = mtime(join(root, 'dist', 'cli', 'program.js'));
const source = compiled === undefined ? undefined : newest(join(root, 'src'));
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
