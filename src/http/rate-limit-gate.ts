/**
 * Remembers, per API origin, until when the server told us to stay away, and refuses to send before then.
 *
 * Retrying one activity after `nextRetryDelay` is not enough: with hundreds of workflows in flight, every
 * other activity on the worker would keep sending and each of those requests counts as "sent while
 * limited", the behaviour that gets integrations banned. The gate is shared by every activity of a worker
 * process, so the first limited response closes it for all of them, and they fail fast (retryable, with
 * the remaining wait as `nextRetryDelay`) without touching the network.
 */
import { WALL_CLOCK, type Clock } from '../common/clock';
export class RateLimitGate {
  private readonly blockedUntil = new Map<string, number>();

  constructor(private readonly clock: Clock = WALL_CLOCK) {}

  /** Milliseconds this origin is still closed for, or 0 when requests may go out. */
  remainingMs(origin: string): number {
    const until = this.blockedUntil.get(origin);
    if (until === undefined) return 0;
    const left = until - this.clock();
    if (left <= 0) {
      this.blockedUntil.delete(origin);
      return 0;
    }
    return left;
  }

  /** Closes the origin until `untilMs` (never shortens an existing block). */
  block(origin: string, untilMs: number): void {
    const current = this.blockedUntil.get(origin) ?? 0;
    if (untilMs > current) this.blockedUntil.set(origin, untilMs);
  }
}
