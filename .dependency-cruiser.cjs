// Import boundaries of src/ (`npm run lint:layers`, part of `npm test`): the layers point one way, and no two
// folders import each other. docs/architecture.md ("Layers point one way") explains each layer.
//
// LAYERS runs from the bottom up: a file may import its own layer and the layers below it, never one above. A
// path in no layer is outside the rule (the emulator, a product of its own, is excluded from the cruise).
const LAYERS = [
  // Deterministic code shared by workflows and activities; imports nothing of longhaul's.
  { name: 'common', path: '^src/common/' },
  // The release, the configuration read from the environment (settings.ts: every LONGHAUL_* setting), the worker's
  // process settings.
  { name: 'base', path: '^src/(config|release|worker-env|settings)[.]ts$' },
  // Temporal plumbing (connection, codec, Schedules, namespace, bundle) and telemetry (metrics, logs).
  { name: 'temporal', path: '^src/temporal/' },
  { name: 'telemetry', path: '^src/telemetry/' },
  // The HTTP core.
  { name: 'http', path: '^src/http/' },
  // The kits every process is built from: the workflow kit, the activity kit, the CLI kit.
  { name: 'workflow-kit', path: '^src/workflows/kit/' },
  { name: 'activity-kit', path: '^src/activities/' },
  // The archive module: the bytes from storage to disk or to an object store (storage/: the judge, the failures, the
  // transport; object-store/: the stores; the download and the upload on top). It asks a process's API through a
  // parameter, never by importing the process.
  { name: 'archive', path: '^src/archive/' },
  { name: 'cli-kit', path: '^src/cli/kit/' },
  // What a process descriptor is (the shape each process exports).
  { name: 'process-descriptor', path: '^src/processes/descriptor[.]ts$' },
  // What the scheduled processes share (their Schedule health), below the processes that use it.
  { name: 'scheduled-run', path: '^src/processes/scheduled-run/' },
  // The processes, one folder each; they never import one another (the rule below).
  { name: 'process', path: '^src/processes/[^/]+/', pathNot: '^src/processes/scheduled-run/' },
  // The one list of processes.
  { name: 'process-list', path: '^src/processes/index[.]ts$' },
  // What is built from the list: the worker (and the workflow bundle, `bundle.ts`), the `longhaul` program.
  { name: 'top', path: '^src/(cli/|worker[.]ts|bundle[.]ts|main[.]ts|starter[.]ts)', pathNot: '^src/cli/kit/' },
];

const upward = [];
LAYERS.forEach((lower, i) => {
  for (const upper of LAYERS.slice(i + 1)) {
    upward.push({
      name: `upward:${lower.name}->${upper.name}`,
      comment: `${lower.name} is below ${upper.name}: what it needs from above comes in through a descriptor or a parameter`,
      severity: 'error',
      from: { path: lower.path, ...(lower.pathNot ? { pathNot: lower.pathNot } : {}) },
      to: { path: upper.path, ...(upper.pathNot ? { pathNot: upper.pathNot } : {}) },
    });
  }
});

module.exports = {
  forbidden: [
    ...upward,
    {
      name: 'process-imports-process',
      comment: 'A process imports no other process: what two share lives in a lower layer',
      severity: 'error',
      from: { path: '^src/processes/([^/]+)/', pathNot: '^src/processes/scheduled-run/' },
      to: { path: '^src/processes/[^/]+/', pathNot: ['^src/processes/$1/', '^src/processes/scheduled-run/'] },
    },
    {
      name: 'no-folder-cycles',
      comment: 'Two folders under src/ import each other (directly or round a circle)',
      severity: 'error',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    // `import type` counts: a layer that names a type from above depends on it as much as on a value.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^src/emulator/' },
    doNotFollow: { path: 'node_modules' },
  },
};
