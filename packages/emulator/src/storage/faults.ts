/**
 * Ways the storage origin misbehaves on purpose (issue 13): what a captive proxy, an expired or forbidden
 * URL, a truncating middlebox or a changed object look like to the downloader. Rules are deterministic:
 * `skip` matching requests pass first, then the rule fires `times` times (always when omitted).
 */
export type StorageFault =
  /** Answers with this page instead of the object (e.g. 200 `text/html` "AccessDenied"). */
  | { kind: 'page'; status?: number; contentType: string; body: string; skip?: number; times?: number }
  /** Serves the object's bytes under another content type. */
  | { kind: 'content-type'; contentType: string; skip?: number; times?: number }
  /**
   * Announces the full length, then closes the connection: after `sendBytes` bytes of this response,
   * or (`untilOffset`) once the object's byte `untilOffset` is reached, so a resume makes no progress.
   */
  | { kind: 'short'; sendBytes?: number; untilOffset?: number; skip?: number; times?: number }
  /**
   * Ignores a request's `Range` (and `If-Range`): answers 200 with the whole object from byte 0, as stores and
   * proxies without range support do. Counts only requests that carry a `Range`.
   */
  | { kind: 'ignore-range'; skip?: number; times?: number }
  /** Answers 302 to `location`, or to the request's own URL (a redirect loop) when omitted. */
  | { kind: 'redirect'; location?: string; skip?: number; times?: number }
  /** The pre-signed URL handed to the API's 302 is `location` (e.g. `file:///etc/passwd`). */
  | { kind: 'presign'; location: string; skip?: number; times?: number }
  /** The object is replaced by new content (new ETag and Last-Modified) before this request is served. */
  | { kind: 'change'; skip?: number; times?: number };

export type StorageFaultKind = StorageFault['kind'];

interface FaultState {
  fault: StorageFault;
  seen: number;
  fired: number;
}

/** The active rules and how often each fired. */
export class StorageFaults {
  private states: FaultState[] = [];

  set(faults: StorageFault[]): void {
    this.states = faults.map((fault) => ({ fault, seen: 0, fired: 0 }));
  }

  /** The first rule of one of `kinds` that fires for this request, if any. */
  pick<K extends StorageFaultKind>(kinds: K[]): Extract<StorageFault, { kind: K }> | undefined {
    for (const state of this.states) {
      if (!kinds.includes(state.fault.kind as K)) continue;
      state.seen++;
      if (state.seen <= (state.fault.skip ?? 0)) continue;
      if (state.fault.times !== undefined && state.fired >= state.fault.times) continue;
      state.fired++;
      return state.fault as Extract<StorageFault, { kind: K }>;
    }
    return undefined;
  }

  /** How many times rules of `kind` fired. */
  fired(kind: StorageFaultKind): number {
    return this.states.filter((s) => s.fault.kind === kind).reduce((sum, s) => sum + s.fired, 0);
  }
}
