/** Commander argument parsers the starter's commands share (a bad value is a usage error, exit code 2). */
import { InvalidArgumentError } from 'commander';

export function positiveSeconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a positive number of seconds');
  return n;
}

export function wholeNumber(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('must be a whole number');
  return Number(value);
}
