/** Commander argument parsers the starter's commands share (a bad value is a usage error, exit code 2). */
import { InvalidArgumentError } from 'commander';
import { credentialNameProblems } from '../../common/credential';

export function positiveSeconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a positive number of seconds');
  return n;
}

/** A share of the time waited so far, in percent (`15` or `15%`), above 0 and at most 100. Returns the fraction. */
export function percentOfWait(value: string): number {
  const n = Number(value.replace(/%$/, ''));
  if (!Number.isFinite(n) || n <= 0 || n > 100) throw new InvalidArgumentError('must be a percentage above 0 and at most 100');
  return n / 100;
}

export function wholeNumber(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('must be a whole number');
  return Number(value);
}

/** A duration: `90` (seconds), `250ms`, `30s`, `1m`, `1.5h`, `1d`. Returns milliseconds. */
export function duration(value: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(value.trim());
  if (!m) throw new InvalidArgumentError('must be a duration such as 30s, 5m, 1h or 1d');
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] ?? 's'] ?? 1_000;
  const ms = Math.round(Number(m[1]) * unit);
  if (ms <= 0) throw new InvalidArgumentError('must be longer than zero');
  return ms;
}

/** `--credential <name>`: a credential configured on the workers, never the secret itself. */
export function credentialName(value: string): string {
  const problems = credentialNameProblems(value);
  if (problems.length > 0) throw new InvalidArgumentError(problems.join('; '));
  return value;
}

export const CREDENTIAL_OPTION_HELP = 'the credential (host and rate budget) to use, by its name on the workers (default: their default credential)';
