/**
 * The emulated Google Cloud family: API Keys v2, Cloud Logging v2 (log buckets and their operations, and
 * `entries:write`) and Cloud DNS v1, each API at the root of an origin of its own (its own port, as
 * `apikeys.googleapis.com`, `logging.googleapis.com` and `dns.googleapis.com` are hosts of their own), with
 * Google-style errors. Google's generated clients take nothing but a root URL and resolve `/v2/…` against
 * it, dropping any path, so a service under a path prefix would be out of their reach. The `google` module
 * serves API keys, buckets and DNS over one fixture; `loggingEntries` is its own module on the logging service.
 */
import { defineModule, durableParts, type ServiceSpec } from '../module';
import { defaultApiKeyOptions, registerApiKeyRoutes, type ApiKeyOptions } from './apikeys';
import { defaultDnsOptions, registerDnsRoutes, type DnsOptions } from './dns';
import { defaultGoogleFixture, type GoogleFixture } from './fixture';
import { defaultLogBucketOptions, registerLogBucketRoutes, type LogBucketOptions } from './logging-buckets';
import { registerLoggingEntryRoutes } from './logging-entries';

export type GoogleApi = 'apikeys' | 'logging' | 'dns';

/** Emulator options the Google family reads as a whole. */
export interface GoogleFamilyOptions {
  /** The port each Google API listens on, at its root (0 or absent = any free port). */
  googlePorts?: Partial<Record<GoogleApi, number>>;
}

/** The ports `npm run emulator` and `npm start` use, after the API (8787) and storage (8788) ports. */
export const STANDALONE_GOOGLE_PORTS: Record<GoogleApi, number> = { apikeys: 8789, logging: 8790, dns: 8791 };

const googleService = (api: GoogleApi): ServiceSpec => ({
  name: `google-${api}`,
  prefix: '',
  errorStyle: 'google',
  ownPort: (options) => (options as GoogleFamilyOptions).googlePorts?.[api] ?? 0,
});

export const googleApiKeysService = googleService('apikeys');
export const googleLoggingService = googleService('logging');
export const googleDnsService = googleService('dns');

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
