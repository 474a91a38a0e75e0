/**
 * The send-once grace (pure, shared by the kit's `sendOnce`, the process models' validation and the CLI): after
 * a mutating call whose outcome is unknown, how long the lookups for what it did go on before it is sent again.
 */

/** The default send-once grace for a call with this start-to-close timeout: twice the call plus the server's cutoff. */
export function defaultSendOnceGraceMs(callTimeoutMs: number): number {
  return 2 * callTimeoutMs + 60_000;
}

/**
 * The send-once grace as every process takes it in its input: after a mutating call whose outcome is unknown,
 * how long the lookups for what it did go on before it is sent again. Inputs written before it had one name
 * gave it under their process's own (`startGraceMs` of org migrations, `recoveryGraceMs` of Google
 * operations): that name is still read, `sendOnceGraceMs` first.
 */
export interface SendOnceGraceInput {
  /** @format milliseconds — default `defaultSendOnceGraceMs` of the call's timeout. */
  sendOnceGraceMs?: number;
}

/** Problems with the grace an input gives under its name and under the name its process accepted before (`legacy`). */
export function sendOnceGraceProblems(sendOnceGraceMs: unknown, legacy: { name: string; value: unknown }, maxMs: number): string[] {
  const problems: string[] = [];
  for (const [name, v] of [['sendOnceGraceMs', sendOnceGraceMs], [legacy.name, legacy.value]] as const) {
    if (v !== undefined && !(typeof v === 'number' && Number.isFinite(v) && v >= 1_000 && v <= maxMs)) {
      problems.push(`${name} must be a number of milliseconds between 1000 and ${maxMs}`);
    }
  }
  if (sendOnceGraceMs !== undefined && legacy.value !== undefined) problems.push(`give sendOnceGraceMs or ${legacy.name} (its former name), not both`);
  return problems;
}
