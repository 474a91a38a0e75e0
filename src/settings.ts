/**
 * Every `LONGHAUL_*` setting, in one table, and the one reader of them (`setting`): longhaul reads no `LONGHAUL_*`
 * variable any other way (`test/unit/settings.test.ts` fails on a read outside this file, on a name the table does
 * not have, and on a table in docs/operations.md that differs from this one: `npm run docs:settings` writes it).
 * What a value means and how it is checked stays with the code that uses it (`config.ts`, `telemetry/runtime.ts`,
 * `temporal/codec.ts`…); this file knows the names, so a variable no release reads (a typo, a setting of a newer
 * release) is reported (`unknownSettings`): a warning at worker start and a finding of `longhaul doctor`.
 */

/** Who reads a setting: longhaul itself (worker, CLI), the emulator package, the compose file, or the project's tests, scripts and benchmarks. */
export type SettingReader = 'longhaul' | 'emulator' | 'compose' | 'development';

export interface SettingSpec {
  /** What it sets, one line for the docs' table. */
  readonly what: string;
  /** The value when unset, as the docs say it. */
  readonly default?: string;
  readonly readBy?: SettingReader;
  /** A secret: also read from the file its `_FILE` variable names. */
  readonly secret?: true;
}

/** Every setting, by name (docs/operations.md's table in this order). */
export const SETTINGS = {
  LONGHAUL_TASK_QUEUE: { what: 'the Temporal task queue workers poll and the CLI starts work on', default: 'longhaul' },
  LONGHAUL_DATA_DIR: { what: 'where downloads, spools and the embedded server state go', default: '.longhaul' },
  LONGHAUL_CACHE_DIR: { what: 'where the `temporal` CLI and test servers are cached', default: '$XDG_CACHE_HOME/longhaul or ~/.cache/longhaul' },
  LONGHAUL_WORKFLOW_BUNDLE: { what: 'a prebuilt workflow bundle the worker loads instead of bundling at start' },
  LONGHAUL_MEMORY_LOG_SECONDS: { what: "log where the worker's memory is every N seconds", default: '0 (off)' },
  LONGHAUL_REGISTER_SEARCH_ATTRIBUTES: { what: 'whether a worker registers missing search attributes before it polls (`on`/`off`)', default: 'on with the embedded server, off otherwise' },
  LONGHAUL_WORKER_VERSIONING: { what: 'the worker is a version of a Worker Deployment (`on`/`off`)', default: 'off' },
  LONGHAUL_WORKER_DEPLOYMENT: { what: "the Worker Deployment's name", default: 'longhaul' },
  LONGHAUL_BUILD_ID: { what: "the worker's build id", default: "package.json's version" },
  LONGHAUL_GITHUB_CREDENTIAL: { what: 'the name of the default GitHub credential', default: 'github' },
  LONGHAUL_GITHUB_CREDENTIALS: { what: 'more GitHub credentials by name, comma-separated (each with its own variables)' },
  LONGHAUL_GOOGLE_CREDENTIAL: { what: 'the name of the Google credential and its fleet-wide budget', default: 'google' },
  LONGHAUL_IMPORT_CREDENTIALS: { what: 'source-import credentials by name, comma-separated; each reads `LONGHAUL_IMPORT_<NAME>_USERNAME` and `_PASSWORD`' },
  LONGHAUL_SINK_SECRET: { what: "the `default` sink's signing secret", secret: true },
  LONGHAUL_SINK_SECRETS: { what: 'more sink signing secrets by name, comma-separated; each reads `LONGHAUL_SINK_<NAME>_SECRET`' },
  LONGHAUL_RATE_GOVERNOR: { what: 'the fleet-wide rate governor (`on`/`off`)', default: 'on' },
  LONGHAUL_MAX_CONCURRENT_REQUESTS: { what: "the governor's requests in flight per credential", default: "the governor's" },
  LONGHAUL_RATE_RESERVE: { what: 'requests of each window the governor keeps in reserve', default: "the governor's" },
  LONGHAUL_MUTATION_SPACING_MS: { what: 'the least time between two mutating requests of one credential (ms)', default: "the governor's" },
  LONGHAUL_CONTENT_PER_MINUTE: { what: 'content-creating requests per minute', default: "the governor's" },
  LONGHAUL_CONTENT_PER_HOUR: { what: 'content-creating requests per hour', default: "the governor's" },
  LONGHAUL_SPAMMED_WAIT_MS: { what: 'the wait after a secondary limit without `retry-after` (ms)', default: '60000' },
  LONGHAUL_ARCHIVE_TO: { what: "the worker's default archive destination (`s3://…`, `gs://…`, `azblob://…`)", default: 'the data directory' },
  LONGHAUL_ARCHIVE_PART_MIB: { what: "an archive upload's part size (MiB)", default: '8' },
  LONGHAUL_ARCHIVE_PARTS_IN_FLIGHT: { what: "an archive upload's parts stored at once", default: '4' },
  LONGHAUL_ALLOWED_HOSTS: { what: 'loopback or private hosts an answer or input may lead the worker to, comma-separated' },
  LONGHAUL_CA_FILE: { what: "PEM certificates trusted besides Node's roots (a TLS-inspecting proxy's CA)" },
  LONGHAUL_METRICS_ADDRESS: { what: 'where the Prometheus endpoint listens (`host:port` or `off`)', default: '127.0.0.1:9464 (worker)' },
  LONGHAUL_LOG_FORMAT: { what: 'the log format (`text` or `json`)', default: 'text' },
  LONGHAUL_LOG_LEVEL: { what: 'the least log level written', default: 'INFO' },
  LONGHAUL_CODEC_KEYS: { what: 'payload encryption keys (`id:base64key`, comma-separated, the first encrypts)', secret: true },
  LONGHAUL_CODEC_KEY_FILE: { what: 'a file holding the payload encryption keys' },
  LONGHAUL_CODEC_SERVER_TOKEN: { what: "bearer tokens the codec server accepts (comma- or newline-separated)", secret: true },
  LONGHAUL_CODEC_SERVER_AUTH: { what: '`off`: the codec server takes no token (loopback only)', default: 'on' },
  LONGHAUL_CODEC_SERVER_CORS_ORIGINS: { what: 'browser origins the codec server allows', default: "the local UI's" },
  LONGHAUL_CODEC_SERVER_HOSTS: { what: 'host names the codec server answers besides loopback' },
  LONGHAUL_CODEC_SERVER_HOST: { what: "the codec server's bind address", default: '127.0.0.1' },
  LONGHAUL_CODEC_SERVER_TLS_CERT_FILE: { what: "the codec server's TLS certificate (PEM; with the key)" },
  LONGHAUL_CODEC_SERVER_TLS_KEY_FILE: { what: "the codec server's TLS key (PEM; with the certificate)" },
  LONGHAUL_EMULATOR_EXPORT_MS: { what: "`longhaul start`/`demo`: how long the emulator's migration export takes (ms)" },
  LONGHAUL_EMULATOR_HOST: { what: "the emulator's bind address", readBy: 'emulator' },
  LONGHAUL_EMULATOR_PORT: { what: "the emulator's GitHub API port", readBy: 'emulator' },
  LONGHAUL_EMULATOR_STORAGE_PORT: { what: "the emulator's storage origin port", readBy: 'emulator' },
  LONGHAUL_EMULATOR_APIKEYS_PORT: { what: "the emulator's API Keys port", readBy: 'emulator' },
  LONGHAUL_EMULATOR_LOGGING_PORT: { what: "the emulator's Cloud Logging port", readBy: 'emulator' },
  LONGHAUL_EMULATOR_DNS_PORT: { what: "the emulator's Cloud DNS port", readBy: 'emulator' },
  LONGHAUL_EMULATOR_API_PUBLIC_URL: { what: "the emulator's API URL as clients reach it", readBy: 'emulator' },
  LONGHAUL_EMULATOR_STORAGE_PUBLIC_URL: { what: "the emulator's storage URL as clients reach it", readBy: 'emulator' },
  LONGHAUL_PUBLISH_ADDRESS: { what: 'the compose stack: the address its ports are published on', default: '127.0.0.1', readBy: 'compose' },
  LONGHAUL_CODEC_ENDPOINT: { what: "the compose stack: the codec server's URL the Web UI uses", readBy: 'compose' },
  LONGHAUL_CODEC_PASS_ACCESS_TOKEN: { what: "the compose stack: whether the Web UI passes its access token to the codec server", readBy: 'compose' },
  LONGHAUL_BUSY_PROCESSES: { what: '`npm run test:busy`: busy processes run beside the suite', readBy: 'development' },
  LONGHAUL_CAP_TEST_HOURS: { what: "the event-cap test's simulated hours", readBy: 'development' },
  LONGHAUL_UPGRADE_TEST_ADDRESS: { what: 'the upgrade test and the production-stack proof: a Temporal server to use', readBy: 'development' },
  LONGHAUL_UPGRADE_TEST_NAMESPACE: { what: "the upgrade test: that server's namespace", readBy: 'development' },
  LONGHAUL_TEST_SERVER_JAVA_OPTS: { what: "the time-skipping test server's JVM options", readBy: 'development' },
  LONGHAUL_BENCH_ARRIVALS: { what: '`bench:migrations`: where to write the arrivals', readBy: 'development' },
  LONGHAUL_BENCH_WORKER_LOG: { what: "`bench:migrations`: where to write the worker's log", readBy: 'development' },
  LONGHAUL_PROCESS_NAMES: { what: '`npm run count:literals`: the process names to count', readBy: 'development' },
  LONGHAUL_TOKEN: { what: 'the Python conformance suite: the token it sends the emulator', readBy: 'development' },
  LONGHAUL_GITHUB_URL: { what: "the Python conformance suite: the emulator's GitHub URL", readBy: 'development' },
  LONGHAUL_GOOGLE_APIKEYS_URL: { what: "the Python conformance suite: the emulator's API Keys URL", readBy: 'development' },
  LONGHAUL_GOOGLE_LOGGING_URL: { what: "the Python conformance suite: the emulator's Cloud Logging URL", readBy: 'development' },
  LONGHAUL_GOOGLE_DNS_URL: { what: "the Python conformance suite: the emulator's Cloud DNS URL", readBy: 'development' },
} as const satisfies Record<string, SettingSpec>;

export type SettingName = keyof typeof SETTINGS;

/**
 * Families of settings named after what the operator named: a credential's or a sink secret's variables, and any
 * secret's `_FILE`. Each is listed by its parent setting above.
 */
export const SETTING_FAMILIES: readonly { pattern: RegExp; shown: string; what: string }[] = [
  { pattern: /^LONGHAUL_IMPORT_[A-Z0-9_]+_(USERNAME|PASSWORD)(_FILE)?$/, shown: '`LONGHAUL_IMPORT_<NAME>_USERNAME`, `…_PASSWORD` (each or its `_FILE`)', what: 'an import credential named in `LONGHAUL_IMPORT_CREDENTIALS`' },
  { pattern: /^LONGHAUL_SINK_[A-Z0-9_]+_SECRET(_FILE)?$/, shown: '`LONGHAUL_SINK_<NAME>_SECRET` (or `_FILE`)', what: 'a sink secret named in `LONGHAUL_SINK_SECRETS`' },
  { pattern: /^LONGHAUL_(SINK_SECRET|CODEC_SERVER_TOKEN)_FILE$/, shown: '`LONGHAUL_SINK_SECRET_FILE`, `LONGHAUL_CODEC_SERVER_TOKEN_FILE`', what: "the file holding the secret of the setting without `_FILE`" },
];

/** The one reader of a `LONGHAUL_*` setting: its value in `env`, undefined when unset. */
export function setting(name: SettingName, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env[name];
}

/**
 * A variable named at run time (a credential's or a sink secret's variable, a secret's `_FILE`, or another
 * program's variable such as `GITHUB_TOKEN`): its value. A `LONGHAUL_*` name neither the table nor a family has
 * is a `TypeError` (a bug: longhaul builds every such name itself).
 */
export function readVariable(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (name.startsWith('LONGHAUL_') && !isKnownSetting(name)) throw new TypeError(`${name} is not a setting longhaul knows (src/settings.ts)`);
  return env[name];
}

export function isKnownSetting(name: string): boolean {
  return Object.hasOwn(SETTINGS, name) || SETTING_FAMILIES.some((f) => f.pattern.test(name));
}

export interface UnknownSetting {
  name: string;
  /** The known setting it most likely meant, when one is close. */
  meant?: SettingName;
}

/** `LONGHAUL_*` variables of `env` that no release reads: typos, or settings of another release. */
export function unknownSettings(env: NodeJS.ProcessEnv = process.env): UnknownSetting[] {
  return Object.keys(env)
    .filter((name) => name.startsWith('LONGHAUL_') && !isKnownSetting(name))
    .sort()
    .map((name) => {
      const meant = closest(name);
      return meant ? { name, meant } : { name };
    });
}

/** One line per unknown setting, for the worker's warning and `doctor`. */
export function describeUnknown(unknown: UnknownSetting): string {
  return `${unknown.name} is set but no setting of longhaul has that name${unknown.meant ? ` (did you mean ${unknown.meant}?)` : ''}; docs/operations.md lists every setting`;
}

/** The known name within a small edit distance (a typo), if one is. */
function closest(name: string): SettingName | undefined {
  let best: { name: SettingName; distance: number } | undefined;
  for (const known of Object.keys(SETTINGS) as SettingName[]) {
    const distance = editDistance(name, known);
    if (distance <= Math.max(2, Math.floor(known.length / 8)) && (!best || distance < best.distance)) best = { name: known, distance };
  }
  return best?.name;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length];
}
