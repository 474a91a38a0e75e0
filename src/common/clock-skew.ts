/**
 * How far a worker's clock may be from an API's: one margin per API, each with its reason. Wherever a time the API
 * recorded is compared with one the worker took (a migration's `created_at` with the start's attempt window, a hook
 * delivery's `delivered_at` with the last run's check, an operation's or key's create time with the send), the
 * comparison is widened by the API's margin, so a skewed clock neither misses what longhaul did nor takes it twice.
 * Deterministic: workflows and activities read the same table.
 */
export const CLOCK_SKEW_MS = {
  /**
   * GitHub: its times are its servers' (`created_at`, `delivered_at`), whole seconds, and the worker's clock is
   * only as good as its host's time sync (a VM resumed from suspend or a container without NTP drifts by minutes).
   * Five minutes (Kerberos's default tolerance, for the same reason) covers that; a wider window only
   * costs a few deliveries listed twice, or a lookup that also sees a start of the same repositories and flags made
   * in those minutes.
   */
  github: 5 * 60 * 1000,
  /**
   * Google: operations and keys carry the service's create time, compared with the worker's time of the send when
   * a lookup after an unknown outcome looks back for what the send may have done; the same five minutes, since
   * what it finds there is adopted only when it also matches the request (the key, the bucket, the change).
   */
  google: 5 * 60 * 1000,
} as const;
