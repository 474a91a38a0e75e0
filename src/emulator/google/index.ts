/**
 * The emulated Google Cloud family: API Keys v2, Cloud Logging v2 (log buckets and their operations, and
 * `entries:write`) and Cloud DNS v1, each API under its own prefix with Google-style errors. The `google`
 * module serves API keys, buckets and DNS over one fixture; `loggingEntries` is its own module on the
 * logging service.
 */
import { defineModule, durableParts, type ServiceSpec } from '../module';
import { defaultApiKeyOptions, registerApiKeyRoutes, type ApiKeyOptions } from './apikeys';
import { defaultDnsOptions, registerDnsRoutes, type DnsOptions } from './dns';
import { defaultGoogleFixture, type GoogleFixture } from './fixture';
import { defaultLogBucketOptions, registerLogBucketRoutes, type LogBucketOptions } from './logging-buckets';
import { registerLoggingEntryRoutes } from './logging-entries';

export const googleApiKeysService: ServiceSpec = { name: 'google-apikeys', prefix: '/google/apikeys', errorStyle: 'google' };
export const googleLoggingService: ServiceSpec = { name: 'google-logging', prefix: '/google/logging', errorStyle: 'google' };
export const googleDnsService: ServiceSpec = { name: 'google-dns', prefix: '/google/dns', errorStyle: 'google' };

export interface GoogleOptions {
  /** Projects, API keys and zones (default: `defaultGoogleFixture()`). */
  fixture?: GoogleFixture;
  apikeys: ApiKeyOptions;
  buckets: LogBucketOptions;
  dns: DnsOptions;
}

/** Google services: fixture, API-key / log-bucket operation timing, cancel behaviour, DNS change timing. */
export const googleModule = defineModule({
  name: 'google',
  service: googleApiKeysService,
  defaults: { apikeys: defaultApiKeyOptions, buckets: defaultLogBucketOptions, dns: defaultDnsOptions } as GoogleOptions,
  register(router, ctx, options) {
    const fixture = options.fixture ?? defaultGoogleFixture();
    const apikeys = registerApiKeyRoutes(router, ctx, fixture, options.apikeys);
    const buckets = registerLogBucketRoutes(ctx.mount(googleLoggingService), ctx, fixture, options.buckets);
    const dns = registerDnsRoutes(ctx.mount(googleDnsService), ctx, fixture, options.dns);
    return { fixture, apikeys, buckets, dns, durable: durableParts({ apikeys: apikeys.durable, buckets: buckets.durable, dns: dns.durable }) };
  },
});

/** Cloud Logging entries written through `entries:write`. */
export const loggingEntriesModule = defineModule({ name: 'loggingEntries', service: googleLoggingService, defaults: {}, register: (router) => registerLoggingEntryRoutes(router) });

export type GoogleEmulatorState = ReturnType<typeof googleModule.register>;
