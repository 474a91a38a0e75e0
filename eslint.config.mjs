// Lint rules that keep the architecture honest: workflows, the workflow kit, src/common and every
// deterministic file of a process slice (src/processes/<process>/: its model and workflow files, everything
// but `activities*`, `cli*` and its descriptor `process.ts`) stay deterministic (no Node built-ins, no I/O
// libraries) and import activities as types only. The layers' import boundaries are dependency-cruiser's
// (.dependency-cruiser.cjs, `npm run lint:layers`).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default tseslint.config(
  { ignores: ['**/node_modules/', '**/dist/', '.longhaul/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/consistent-type-imports': ['error', { prefer: 'type-imports', fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    files: ['src/workflows/**/*.ts', 'src/common/**/*.ts', 'src/processes/**/*.ts'],
    // A process's descriptor (process.ts) and the list of them (index.ts) gather its activities and commands:
    // the worker and the program read them, no workflow does.
    ignores: [
      'src/processes/*/activities.ts',
      'src/processes/*/activities/**',
      'src/processes/*/cli.ts',
      'src/processes/*/cli-*.ts',
      'src/processes/*/process.ts',
      'src/processes/index.ts',
      'src/processes/descriptor.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...nodeBuiltins.map((name) => ({ name, message: 'Workflows must be deterministic: no Node built-ins.' })),
            { name: 'undici', message: 'Workflows do no I/O: call an activity.' },
            { name: '@temporalio/client', message: 'Workflows use @temporalio/workflow only.' },
            { name: '@temporalio/activity', message: 'Workflows use @temporalio/workflow only.' },
            {
              name: '@temporalio/workflow',
              importNames: ['upsertSearchAttributes'],
              message: "Upsert with the kit's upsertAttributes: a value the server refuses terminates the run.",
            },
          ],
          patterns: [
            {
              group: [
                './activities',
                './activities/*',
                '../activities',
                '../activities/*',
                '../activities/**',
                '../../activities',
                '../../activities/*',
                '../../activities/**',
                '../*/activities',
                '../*/activities/*',
              ],
              allowTypeImports: true,
              message: 'Import activities as types only.',
            },
            {
              group: ['../http/*', '../emulator/*', '../temporal/*', '../cli/*', '../../http/*', '../../emulator/*', '../../temporal/*', '../../cli/*', './cli', './cli-*', '../*/cli', '../*/cli-*'],
              message: 'Workflows do no I/O.',
            },
          ],
        },
      ],
    },
  },
  {
    // The `longhaul` launcher (package.json bin) and test preloads: plain CommonJS run by Node before (or without)
    // TypeScript's loader.
    files: ['bin/**/*.js', 'test/**/*.cjs', 'packages/*/index.js', '.dependency-cruiser.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', process: 'readonly', __dirname: 'readonly', console: 'readonly', module: 'writable' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
