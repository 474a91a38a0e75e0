/** Credential names in workflow inputs (never a secret) and how a shared-limit wait is read back for users. */
import { describe, expect, it } from 'vitest';
import { credentialNameProblems, credentialOfInput } from '../../src/common/credential';
import { sharedWaitLine, sharedWaitOf } from '../../src/common/shared-wait';
import { GHP, GOOGLE_ACCESS_TOKEN, JWT, PAT } from '../helpers/fake-secrets';

describe('credential names in workflow inputs', () => {
  it('accepts absent and configured-style names', () => {
    expect(credentialNameProblems(undefined)).toEqual([]);
    expect(credentialNameProblems('github')).toEqual([]);
    expect(credentialNameProblems('ghes.corp-1')).toEqual([]);
  });

  it('refuses secrets without echoing them, and malformed names with the rule', () => {
    for (const secret of [GHP, PAT, GOOGLE_ACCESS_TOKEN, JWT]) {
      const [problem] = credentialNameProblems(secret);
      expect(problem).toMatch(/looks like a secret/);
      expect(problem).not.toContain(secret.slice(0, 8));
    }
    expect(credentialNameProblems('')).toHaveLength(1);
    expect(credentialNameProblems(42)).toHaveLength(1);
    expect(credentialNameProblems('two words')[0]).toMatch(/letters, digits/);
  });

  it('reads the field from a workflow\'s first argument only', () => {
    expect(credentialOfInput([{ org: 'o', credential: 'ghes' }])).toBe('ghes');
    expect(credentialOfInput([{ org: 'o' }])).toBeUndefined();
    expect(credentialOfInput([null])).toBeUndefined();
    expect(credentialOfInput([])).toBeUndefined();
  });
});

describe('shared-limit waits seen from outside the worker', () => {
  const now = Date.UTC(2026, 10, 23, 16, 0, 0);
  const until = new Date(now + 5_000).toISOString();

  it('finds a wait in heartbeat details or in a last failure message, while it lasts', () => {
    const fromHeartbeat = sharedWaitOf([{ heartbeat: { sharedLimitWait: { credential: 'ghes', until, reason: 'secondary' } } }], now);
    expect(fromHeartbeat && sharedWaitLine(fromHeartbeat)).toBe(`waiting on the shared limit of ghes until ${until}`);
    const message = `not sent: ${sharedWaitLine({ credential: 'github', until })} (primary rate limit: spent)`;
    expect(sharedWaitOf([{ heartbeat: { bytes: 10 } }, { lastFailureMessage: message }], now)).toEqual({ credential: 'github', until, reason: 'primary rate limit: spent' });
    expect(sharedWaitOf([{ lastFailureMessage: message }], now + 6_000)).toBeUndefined();
    expect(sharedWaitOf([{ lastFailureMessage: 'HTTP 502' }], now)).toBeUndefined();
  });
});
