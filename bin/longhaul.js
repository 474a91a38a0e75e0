#!/usr/bin/env node
/**
 * The `longhaul` command (package.json `bin`): runs the compiled CLI in dist/ (`npm run build`) when it is
 * there and not older than the source, otherwise the TypeScript source through tsx (a checkout after
 * `npm install`), so `npx longhaul …` works in this repository without a build step.
 */
'use strict';
const { statSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const mtime = (path) => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
};

const compiled = mtime(join(root, 'dist', 'cli', 'program.js'));
const source = mtime(join(root, 'src', 'cli', 'program.ts'));
let cli;
if (compiled !== undefined && (source === undefined || compiled >= source)) {
  cli = require(join(root, 'dist', 'cli', 'program.js'));
} else {
  require('tsx/cjs');
  cli = require(join(root, 'src', 'cli', 'program.ts'));
}
cli.runCli(process.argv).then((code) => process.exit(code));
