/**
 * The HTTP requests this process sends (an in-process worker's), when undici writes their headers: the same
 * `undici:client:sendHeaders` diagnostics channel `sent-requests.cjs` records in a worker process, read here without
 * a preload. No product code is involved. Each send is stamped with `clock` (a stack's `clock.now` on a
 * time-skipping stack, whose emulator and HTTP clients run on it), so a test compares it with what the sender knew
 * on the same clock.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { SentRequest } from './fleet-news';

const CHANNEL = 'undici:client:sendHeaders';

export interface SendsHere {
  /** The requests sent to `origin` so far, in order. */
  sends: SentRequest[];
  stop(): void;
}

/** Records the requests this process sends to `origin` until `stop()`. */
export function recordSendsHere(origin: string, clock: () => number = Date.now): SendsHere {
  const sends: SentRequest[] = [];
  const onSend = (message: unknown) => {
    const { request } = message as { request: { origin?: unknown; method: string; path: string } };
    if (String(request.origin ?? '') === origin) sends.push({ at: clock(), method: request.method, path: request.path });
  };
  subscribe(CHANNEL, onSend);
  return { sends, stop: () => unsubscribe(CHANNEL, onSend) };
}
