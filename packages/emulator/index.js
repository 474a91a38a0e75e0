'use strict';
/**
 * The package's entry (`main`). Under a TypeScript loader (tsx: `npm start`, `npm run demo`, the tests' child
 * processes) it is the source, so an edit is never hidden behind an old build; under plain Node (the compiled
 * longhaul in `dist/`, after `npm run build`) the compiled `dist/`. Vitest maps the package to the source itself
 * (vitest.config.ts), and TypeScript reads the source's types (`types`).
 */
module.exports = require(require.extensions['.ts'] ? './src/index.ts' : './dist/index.js');
