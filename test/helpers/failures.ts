/**
 * `expectFailure(promise, type)`: awaits a workflow (or any call) that must fail, and returns the
 * `ApplicationFailure` of the given type found along the cause chain (`WorkflowFailedError → … →
 * ApplicationFailure`). Fails the test, naming the chain, when the promise resolves or no such failure is there.
 */
import { expect } from 'vitest';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';

/** Every error of the cause chain, outermost first. */
export function causeChain(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = err; e !== undefined && e !== null && chain.length < 20; e = (e as { cause?: unknown }).cause) chain.push(e);
  return chain;
}

/** The first `ApplicationFailure` along the cause chain; fails the test when there is none. */
export function applicationFailureOf(err: unknown): ApplicationFailure {
  const found = causeChain(err).find((e): e is ApplicationFailure => e instanceof ApplicationFailure);
  if (!found) expect.fail(`expected an ApplicationFailure along the cause chain of ${String(err)}`);
  return found;
}

export async function expectFailure(promise: Promise<unknown>, type: string): Promise<ApplicationFailure> {
  let error: unknown;
  try {
    await promise;
  } catch (err) {
    error = err;
  }
  if (error === undefined) expect.fail(`expected a failure of type ${type}, but it succeeded`);
  const chain = causeChain(error);
  const found = chain.find((e): e is ApplicationFailure => e instanceof ApplicationFailure && e.type === type);
  if (!found) {
    const names = chain.map((e) => (e instanceof ApplicationFailure ? `ApplicationFailure(${e.type}): ${e.message}` : e instanceof Error ? `${e.name}: ${e.message}` : String(e)));
    expect.fail(`expected a failure of type ${type}; the chain was:\n  ${names.join('\n  ')}`);
  }
  return found;
}

/** Awaits a workflow that must end cancelled (a `CancelledFailure` along the cause chain) and returns that failure. */
export async function expectCancelled(promise: Promise<unknown>): Promise<CancelledFailure> {
  const error = await promise.then(
    () => expect.fail('expected the workflow to end cancelled, but it succeeded'),
    (err: unknown) => err,
  );
  const found = causeChain(error).find((e): e is CancelledFailure => e instanceof CancelledFailure);
  if (!found) expect.fail(`expected a CancelledFailure along the cause chain of ${String(error)}`);
  return found;
}

/** Awaits a call (an activity, a client) that must reject with an `ApplicationFailure` itself, and returns it. */
export async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await promise.then(
    () => expect.fail('expected the call to fail, but it succeeded'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
}
