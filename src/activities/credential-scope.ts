/**
 * Worker side of a named credential: the activity interceptor reads the `longhaul-credential` header the
 * workflow interceptor set and runs the activity inside that scope, so `githubFor`/`googleFor` pick the
 * named credential's client (its host, token and fleet-wide budget) for every request the activity makes.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { defaultPayloadConverter } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { CREDENTIAL_HEADER } from '../common/credential';

const scope = new AsyncLocalStorage<string>();

/** The credential the running activity's workflow named; undefined for the default one. */
export function currentCredential(): string | undefined {
  return scope.getStore();
}

/** Runs `fn` as if its workflow had named `credential` (tests, tools). */
export function withCredential<T>(credential: string, fn: () => T): T {
  return scope.run(credential, fn);
}

export const credentialActivityInterceptor: ActivityInterceptorsFactory = () => ({
  inbound: {
    execute(input, next) {
      const header = input.headers[CREDENTIAL_HEADER];
      const name = header ? defaultPayloadConverter.fromPayload<unknown>(header) : undefined;
      return typeof name === 'string' ? scope.run(name, () => next(input)) : next(input);
    },
  },
});
