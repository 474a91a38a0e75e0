import { afterEach, describe, expect, it, vi } from 'vitest';
import { untilInterrupted } from '../../src/cli/stack-run';

afterEach(() => vi.restoreAllMocks());

describe('Ctrl-C on a running stack', () => {
  it('stops the stack once on the first signal, and a second signal exits through process.exit (so exit handlers stop the dev server)', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => undefined);
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    let finishStop!: () => void;
    const stop = vi.fn(() => new Promise<void>((r) => (finishStop = r)));
    const listenersBefore = process.listenerCount('SIGINT');

    const interrupted = untilInterrupted({ stop });
    process.emit('SIGINT');
    expect(stop).toHaveBeenCalledTimes(1);
    expect(exit).not.toHaveBeenCalled();

    process.emit('SIGTERM');
    expect(stop).toHaveBeenCalledTimes(1);
    expect(exit).toHaveBeenCalledWith(130);

    finishStop();
    await interrupted;
    expect(process.listenerCount('SIGINT')).toBe(listenersBefore);
  });
});
