/**
 * GitHub's primary and secondary rate limits (spec 001), per caller, on an injectable clock.
 *
 * Besides enforcing, it remembers until when each caller was told to wait, so the emulator can count
 * requests that arrive while the caller is already limited: a well-behaved client sends none.
 */
export interface RateLimitConfig {
  /**
   * Whether the limits apply at all. `false` is a GitHub Enterprise Server with rate limiting disabled: no
   * limits, no `x-ratelimit-*` headers, and `GET /rate_limit` answers 404 "Rate limiting is not enabled.".
   */
  enabled: boolean;
  /** Primary: requests per window. */
  limit: number;
  /** @format milliseconds — primary window length (an hour on the real service; seconds in tests). */
  windowMs: number;
  secondary: {
    /** Points per endpoint per window (GET 1, mutations 5). */
    pointsPerWindow: number;
    /** @format milliseconds */
    windowMs: number;
    /** Concurrent requests per caller. */
    maxConcurrent: number;
    /** Content-creating requests per minute and per hour. */
    contentPerMinute: number;
    contentPerHour: number;
    /** The status a secondary limit is answered with. */
    status: 403 | 429;
    /** Send `retry-after` with secondary limits (seconds until the window frees); without it clients must back off ≥ 60 s. */
    retryAfter: boolean;
    /**
     * @format milliseconds — without `retry-after`, how long a caller is expected to wait (spec 001: at
     * least one minute). Requests before then count as sent while limited. Tests shorten it.
     */
    waitWithoutRetryAfterMs: number;
  };
  /** The status a primary limit is answered with. */
  primaryStatus: 403 | 429;
  /**
   * @format milliseconds — requests arriving this soon after the first answer that told the caller to wait
   * were already in flight when it was sent (a concurrent client cannot un-send them): they are counted as
   * `requestsInFlightWhenLimited`, not as requests sent while limited. 250 ms: a fleet that shares its
   * limits must stop every worker within that time of the first limiting answer of a window.
   */
  inFlightGraceMs: number;
}

export const defaultRateLimitConfig: RateLimitConfig = {
  enabled: true,
  limit: 5000,
  windowMs: 60 * 60 * 1000,
  secondary: {
    pointsPerWindow: 900,
    windowMs: 60 * 1000,
    maxConcurrent: 100,
    contentPerMinute: 80,
    contentPerHour: 500,
    status: 403,
    retryAfter: false,
    waitWithoutRetryAfterMs: 60_000,
  },
  primaryStatus: 403,
  inFlightGraceMs: 250,
};

export type LimitVerdict =
  | { ok: true }
  | { ok: false; kind: 'primary' | 'secondary'; status: number; message: string; retryAfterSeconds?: number; limitedUntilMs: number };

interface CallerState {
  windowStart: number;
  used: number;
  /** Points per endpoint in the current secondary window. */
  points: Map<string, { windowStart: number; points: number }>;
  content: number[];
  inFlight: number;
  /** Until when this caller has been told to wait. */
  limitedUntil: number;
  /** When the current wait was first announced. */
  noticeAt: number;
  /** Every primary window so far, for fleet figures (the last one is the current). */
  windows: WindowRecord[];
  /** Arrival of the last mutation (non-GET/HEAD), and the smallest gap between two so far. */
  lastMutationAt?: number;
  lastMutation?: string;
  minMutationGapMs?: number;
  /** The two mutations that came closest (`METHOD /path`), in order of arrival. */
  closestMutations?: [string, string];
  peakConcurrent: number;
}

/** One primary window of a caller: requests counted against it, limited answers and requests sent while limited in it. */
export interface WindowRecord {
  startMs: number;
  /** When the window resets: the whole second its `x-ratelimit-reset` announces. */
  endMs: number;
  used: number;
  limitedAnswers: number;
  whileLimited: number;
}

/** Per-caller figures of how a fleet of clients shared one token. */
export interface CallerFleetStats {
  windows: WindowRecord[];
  /** null until two mutations arrived. */
  minMutationGapMs: number | null;
  /** The two requests of that gap, when the emulator was told their paths. */
  closestMutations?: [string, string];
  peakConcurrent: number;
}

/** How a request relates to the caller's rate-limit state when it arrives. */
export type ArrivalKind = 'open' | 'in-flight' | 'while-limited';

export const SECONDARY_LIMIT_MESSAGE =
  'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.';
export const PRIMARY_LIMIT_MESSAGE = 'API rate limit exceeded. Please wait until the rate limit resets before trying again.';

export class RateLimiter {
  private readonly callers = new Map<string, CallerState>();

  constructor(public config: RateLimitConfig) {}

  private state(caller: string, now: number): CallerState {
    let s = this.callers.get(caller);
    if (!s) {
      s = { windowStart: now, used: 0, points: new Map(), content: [], inFlight: 0, limitedUntil: 0, noticeAt: 0, windows: [], peakConcurrent: 0 };
      s.windows.push({ startMs: now, endMs: this.windowEnd(s), used: 0, limitedAnswers: 0, whileLimited: 0 });
      this.callers.set(caller, s);
    }
    if (now >= this.windowEnd(s)) {
      s.windowStart = now;
      s.used = 0;
      s.windows.push({ startMs: now, endMs: this.windowEnd(s), used: 0, limitedAnswers: 0, whileLimited: 0 });
    }
    return s;
  }

  /**
   * A window opens with the first request after the last one reset and resets at the whole second its
   * `x-ratelimit-reset` (epoch seconds) announces, so a client that believes the header is never early or late.
   */
  private windowEnd(s: CallerState): number {
    return Math.ceil((s.windowStart + this.config.windowMs) / 1000) * 1000;
  }

  /**
   * Classifies an arriving request: `while-limited` when the caller had been told to wait (longer ago than
   * the in-flight grace) and the wait has not passed; `in-flight` when the notice is too recent for the
   * request to have been sent after it; `open` otherwise.
   */
  arrival(caller: string, now: number): ArrivalKind {
    const s = this.state(caller, now);
    if (s.limitedUntil <= now) return 'open';
    if (now - s.noticeAt < this.config.inFlightGraceMs) return 'in-flight';
    s.windows[s.windows.length - 1].whileLimited++;
    return 'while-limited';
  }

  /** Notes a request's method at arrival: the gap between mutations is a figure of how a fleet paces them. */
  noteMethod(caller: string, method: string, now: number, path = ''): void {
    if (method === 'GET' || method === 'HEAD') return;
    const s = this.state(caller, now);
    const request = `${method} ${path}`.trim();
    if (s.lastMutationAt !== undefined && now - s.lastMutationAt < (s.minMutationGapMs ?? Infinity)) {
      s.minMutationGapMs = now - s.lastMutationAt;
      s.closestMutations = [s.lastMutation ?? '', request];
    }
    s.lastMutationAt = now;
    s.lastMutation = request;
  }

  fleetStats(): Record<string, CallerFleetStats> {
    const out: Record<string, CallerFleetStats> = {};
    for (const [caller, s] of this.callers) {
      out[caller] = {
        windows: s.windows.map((w) => ({ ...w })),
        minMutationGapMs: s.minMutationGapMs ?? null,
        ...(s.closestMutations ? { closestMutations: s.closestMutations } : {}),
        peakConcurrent: s.peakConcurrent,
      };
    }
    return out;
  }

  /** Forgets the fleet figures (with the stats reset), keeping the limits' state. */
  resetHistory(): void {
    for (const s of this.callers.values()) {
      s.windows = [{ startMs: s.windowStart, endMs: this.windowEnd(s), used: 0, limitedAnswers: 0, whileLimited: 0 }];
      s.lastMutationAt = undefined;
      s.lastMutation = undefined;
      s.minMutationGapMs = undefined;
      s.closestMutations = undefined;
      s.peakConcurrent = s.inFlight;
    }
  }

  /** Tells the caller to wait until `untilMs`; a new wait (not an extension of one) starts a new notice. */
  private limit(s: CallerState, now: number, untilMs: number): void {
    if (untilMs <= now) return;
    if (s.limitedUntil <= now) s.noticeAt = now;
    s.limitedUntil = Math.max(s.limitedUntil, untilMs);
  }

  resetEpochSeconds(caller: string, now: number): number {
    const s = this.state(caller, now);
    return this.windowEnd(s) / 1000;
  }

  /** Admits or rejects one request. `endpoint` is the route key the secondary point budget is kept by. */
  admit(caller: string, endpoint: string, points: number, contentCreating: boolean, now: number): LimitVerdict {
    const s = this.state(caller, now);
    const cfg = this.config;
    const resetMs = this.windowEnd(s);
    if (s.used >= cfg.limit) {
      s.windows[s.windows.length - 1].limitedAnswers++;
      this.limit(s, now, resetMs);
      return { ok: false, kind: 'primary', status: cfg.primaryStatus, message: PRIMARY_LIMIT_MESSAGE, limitedUntilMs: resetMs };
    }
    const sec = cfg.secondary;
    if (s.inFlight >= sec.maxConcurrent) return this.secondary(s, now, now + 1000);
    let bucket = s.points.get(endpoint);
    if (!bucket || now - bucket.windowStart >= sec.windowMs) {
      bucket = { windowStart: now, points: 0 };
      s.points.set(endpoint, bucket);
    }
    if (bucket.points + points > sec.pointsPerWindow) return this.secondary(s, now, bucket.windowStart + sec.windowMs);
    if (contentCreating) {
      s.content = s.content.filter((t) => now - t < 60 * 60 * 1000);
      const lastMinute = s.content.filter((t) => now - t < 60 * 1000);
      if (lastMinute.length >= sec.contentPerMinute) return this.secondary(s, now, lastMinute[0] + 60 * 1000);
      if (s.content.length >= sec.contentPerHour) return this.secondary(s, now, s.content[0] + 60 * 60 * 1000);
      s.content.push(now);
    }
    bucket.points += points;
    return { ok: true };
  }

  private secondary(s: CallerState, now: number, freeAtMs: number): LimitVerdict {
    s.windows[s.windows.length - 1].limitedAnswers++;
    const sec = this.config.secondary;
    const retryAfterSeconds = sec.retryAfter ? Math.max(1, Math.ceil((freeAtMs - now) / 1000)) : undefined;
    // Without retry-after the client is told nothing; it must wait at least a minute (spec 001). A client
    // that waited that long and finds the limit still in force is rejected again, but did not ignore it.
    const limitedUntilMs = retryAfterSeconds !== undefined ? now + retryAfterSeconds * 1000 : now + sec.waitWithoutRetryAfterMs;
    this.limit(s, now, limitedUntilMs);
    return { ok: false, kind: 'secondary', status: sec.status, message: SECONDARY_LIMIT_MESSAGE, retryAfterSeconds, limitedUntilMs };
  }

  /** Counts a request against the primary window (not for 304s). Returns the headers to send. */
  count(caller: string, now: number, countsAgainstPrimary: boolean): Record<string, string> {
    const s = this.state(caller, now);
    if (countsAgainstPrimary) {
      s.used++;
      s.windows[s.windows.length - 1].used++;
    }
    const remaining = Math.max(0, this.config.limit - s.used);
    // A response that spends the window tells the caller to wait until the reset.
    if (remaining === 0) this.limit(s, now, this.windowEnd(s));
    return this.headers(caller, now);
  }

  /** The caller's primary window as `GET /rate_limit` reports it (`reset` in epoch seconds). */
  status(caller: string, now: number): { limit: number; remaining: number; used: number; reset: number } {
    const s = this.state(caller, now);
    return { limit: this.config.limit, remaining: Math.max(0, this.config.limit - s.used), used: s.used, reset: this.resetEpochSeconds(caller, now) };
  }

  headers(caller: string, now: number): Record<string, string> {
    const { limit, remaining, used, reset } = this.status(caller, now);
    return {
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-remaining': String(remaining),
      'x-ratelimit-used': String(used),
      'x-ratelimit-reset': String(reset),
      'x-ratelimit-resource': 'core',
    };
  }

  enter(caller: string, now: number): void {
    const s = this.state(caller, now);
    s.inFlight++;
    s.peakConcurrent = Math.max(s.peakConcurrent, s.inFlight);
  }
  leave(caller: string, now: number): void {
    this.state(caller, now).inFlight--;
  }
}
