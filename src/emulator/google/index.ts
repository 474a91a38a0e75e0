/**
 * The emulated Google Cloud services: API Keys v2, Cloud Logging v2 (log buckets and their operations) and
 * Cloud DNS v1, each mounted under its own prefix with Google-style errors. Other Logging routes (e.g.
 * `entries:write`) register on the same `logging` service.
 */
import type { EmulatorContext } from '../emulator';
import type { ServiceDefinition } from '../service';
import { defaultApiKeyOptions, registerApiKeyRoutes, type ApiKeyOptions } from './apikeys';
import { defaultDnsOptions, registerDnsRoutes, type DnsOptions } from './dns';
import { defaultGoogleFixture, type GoogleFixture } from './fixture';
import { defaultLogBucketOptions, registerLogBucketRoutes, type LogBucketOptions } from './logging-buckets';

export interface GoogleEmulatorOptions {
  fixture?: GoogleFixture;
  apikeys?: Partial<ApiKeyOptions>;
  buckets?: Partial<LogBucketOptions>;
  dns?: Partial<DnsOptions>;
}

export function registerGoogleRoutes(
  services: { apikeys: ServiceDefinition; logging: ServiceDefinition; dns: ServiceDefinition },
  ctx: EmulatorContext,
  options: GoogleEmulatorOptions = {},
) {
  const fixture = options.fixture ?? defaultGoogleFixture();
  return {
    fixture,
    apikeys: registerApiKeyRoutes(services.apikeys.router, ctx, fixture, { ...defaultApiKeyOptions, ...options.apikeys }),
    buckets: registerLogBucketRoutes(services.logging.router, ctx, fixture, { ...defaultLogBucketOptions, ...options.buckets }),
    dns: registerDnsRoutes(services.dns.router, ctx, fixture, { ...defaultDnsOptions, ...options.dns }),
  };
}

export type GoogleEmulatorState = ReturnType<typeof registerGoogleRoutes>;
