/** What the emulator counts, served at `GET /_emulator/stats`. */
export interface EmulatorStats {
  /** Every API request received (storage downloads are counted separately). */
  requests: number;
  /** By `METHOD pattern`, e.g. `GET /orgs/:org/migrations/:id`. */
  byRoute: Record<string, number>;
  /** By response status. */
  byStatus: Record<string, number>;
  rateLimited: { primary: number; secondary: number };
  /**
   * Requests that arrived while the caller had already been told to wait (the number that gets an
   * integration banned): more than 250 ms (`inFlightGraceMs`) after the first answer of that wait that
   * said "limited" (a limit status, or `remaining: 0`) and before the wait ended.
   */
  requestsWhileLimited: number;
  /** Requests that arrived within 250 ms of that first limiting answer: already in flight when it was sent (a concurrent client cannot un-send them). */
  requestsInFlightWhenLimited: number;
  /** Responses that did not count against the primary limit (e.g. 304). */
  notCounted: number;
  /** The same by `METHOD pattern` (a status poll's 304s: what conditional polling saved). */
  notCountedByRoute: Record<string, number>;
  faultsInjected: number;
  storage: { requests: number; bytesServed: number; rangeRequests: number; rejectedWithAuthorization: number; expired: number };
}

export function emptyStats(): EmulatorStats {
  return {
    requests: 0,
    byRoute: {},
    byStatus: {},
    rateLimited: { primary: 0, secondary: 0 },
    requestsWhileLimited: 0,
    requestsInFlightWhenLimited: 0,
    notCounted: 0,
    notCountedByRoute: {},
    faultsInjected: 0,
    storage: { requests: 0, bytesServed: 0, rangeRequests: 0, rejectedWithAuthorization: 0, expired: 0 },
  };
}

export function increment(map: Record<string, number>, key: string, by = 1): void {
  map[key] = (map[key] ?? 0) + by;
}
