/**
 * `expectFailure(promise, type)`: awaits a workflow (or any call) that must fail, and returns the
 * `ApplicationFailure` of the given type found along the cause chain (`WorkflowFailedError → … →
 * ApplicationFailure`). Fails the test, naming the chain, when the promise resolves or no such failure is there.
 */
import { expect } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';

/** Every error of the cause chain, outermost first. */
export function causeChain(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = err; e !== undefined && e !== null && chain.length < 20; e = (e as { cause?: unknown }).cause) chain.push(e);
  return chain;
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
