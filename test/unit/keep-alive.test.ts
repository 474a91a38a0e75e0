/** `whileBeating`: an activity with a heartbeat timeout (one on a worker's own task queue) beats while it works. */
import { describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { whileBeating } from '../../src/activities/keep-alive';

describe('whileBeating', () => {
  it('beats while the work runs (here the work ends only after 3 beats) and stops when it ends', async () => {
    const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 300 });
    let beats = 0;
    let release!: () => void;
    const work = new Promise<string>((r) => (release = () => r('done')));
    env.on('heartbeat', () => {
      if (++beats === 3) release();
    });
    expect(await env.run(() => whileBeating(() => work))).toBe('done');
    const atEnd = beats;
    // Three beat intervals later, nothing more.
    await new Promise((r) => setTimeout(r, 300));
    expect(beats).toBe(atEnd);
  });

  it('sends nothing for an activity without a heartbeat timeout', async () => {
    const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 0 });
    let beats = 0;
    env.on('heartbeat', () => beats++);
    expect(await env.run(() => whileBeating(async () => 'done'))).toBe('done');
    expect(beats).toBe(0);
  });
});
