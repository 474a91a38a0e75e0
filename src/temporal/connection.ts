/**
 * Where longhaul's Temporal is. Temporal's own conventions decide (`TEMPORAL_ADDRESS`,
 * `TEMPORAL_NAMESPACE`, `TEMPORAL_API_KEY`, `TEMPORAL_TLS_*`, `TEMPORAL_PROFILE` and the TOML config
 * file, read by `@temporalio/envconfig`); with no address configured, longhaul runs the embedded
 * dev server.
 */
import { loadClientConfigProfile, toClientOptions } from '@temporalio/envconfig';
import type { NativeConnectionOptions } from '@temporalio/worker';
import { dataDir, startDevServer, type DevServerOptions, type RunningDevServer } from './dev-server';
import type { Log } from './cli-binary';

export interface TemporalTarget {
  connectionOptions: NativeConnectionOptions;
  namespace: string;
  /** The Web UI base URL, when known. */
  uiUrl?: string;
  /** Set when longhaul runs the embedded dev server. */
  embedded?: RunningDevServer;
}

/** The configured server, if any (never starts anything). */
export function configuredTemporal(env: NodeJS.ProcessEnv = process.env): TemporalTarget | undefined {
  const profile = loadClientConfigProfile({ overrideEnvVars: env as Record<string, string> });
  if (!profile.address) return undefined;
  const { connectionOptions, namespace } = toClientOptions(profile);
  return {
    connectionOptions,
    namespace: namespace ?? 'default',
    uiUrl: process.env.TEMPORAL_UI_URL,
  };
}

/** The configured server, or the embedded dev server started (or reused) on 127.0.0.1:7233. */
export async function resolveTemporal(log: Log, env: NodeJS.ProcessEnv = process.env, devServer: Pick<DevServerOptions, 'uiCodecEndpoint'> = {}): Promise<TemporalTarget> {
  const configured = configuredTemporal(env);
  if (configured) {
    log(`using the Temporal server at ${configured.connectionOptions.address} (namespace ${configured.namespace})`);
    return configured;
  }
  const server = await startDevServer({ ...devServer, dataDir: dataDir(env), log, env });
  return { connectionOptions: { address: server.address }, namespace: server.namespace, uiUrl: server.uiUrl, embedded: server };
}

/** Web UI link to one workflow execution. */
export function workflowUiUrl(target: Pick<TemporalTarget, 'uiUrl' | 'namespace'>, workflowId: string): string | undefined {
  if (!target.uiUrl) return undefined;
  return `${target.uiUrl}/namespaces/${encodeURIComponent(target.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}
