/**
 * Realistic sizes for emulated feed events. Real events are not 0.6 KB: an issue or comment carries
 * its whole body with full user objects, a release its notes, so most events are a few KB and a long
 * tail reaches tens of KB. Sizes are a deterministic function of the event id (tests can
 * predict them) and are reached by filling the type's own large text field, never by an invented field.
 */
import { createHash } from 'node:crypto';
import { mixedEventType, TEXT_EVENT_TYPES, type BuiltPayload, type EventType } from './feed-event-payloads';

/**
 * The size of each event's JSON: `'realistic'` (the default: a mix, most 1–4 KB, a long tail up to
 * `maxBytes`) or a fixed number of bytes for every event (tests of large payloads).
 */
export type EventSizeOption = 'realistic' | number;

/** The largest realistic event (bytes of JSON). */
export const REALISTIC_MAX_EVENT_BYTES = 60_000;

/** A number in [0, 1) from the id, well spread. */
function unit(id: number, salt: number): number {
  const h = createHash('sha1').update(`${salt}:${id}`).digest();
  return h.readUInt32BE(0) / 2 ** 32;
}

/**
 * The target JSON size of event `id`: 55 % small (0.8–2.5 KB), 30 % medium (2.5–8 KB), 11 % large
 * (8–25 KB), 4 % very large (25 KB–`max`).
 */
export function realisticEventBytes(id: number, max = REALISTIC_MAX_EVENT_BYTES): number {
  const u = unit(id, 1);
  const v = unit(id, 2);
  const span = (lo: number, hi: number) => Math.round(lo + (hi - lo) * v);
  if (u < 0.55) return span(800, 2_500);
  if (u < 0.85) return span(2_500, 8_000);
  if (u < 0.96) return span(8_000, 25_000);
  return span(25_000, max);
}

export function targetEventBytes(id: number, option: EventSizeOption): number {
  return option === 'realistic' ? realisticEventBytes(id) : option;
}

const WORDS = ['fix', 'the', 'feed', 'cursor', 'when', 'a', 'page', 'moves', 'add', 'tests', 'for', 'retry', 'of', 'sink', 'update', 'docs', 'and', 'refactor', 'parser', 'handle', 'large', 'payloads', 'in', 'history'];

/** Deterministic prose of exactly `length` characters. */
export function prose(length: number, seed: number): string {
  let out = '';
  let i = seed;
  while (out.length < length) {
    out += `${WORDS[i % WORDS.length]}${i % 11 === 0 ? '.\n' : ' '}`;
    i = (i * 31 + 7) % 1_000_003;
  }
  return out.slice(0, Math.max(0, length));
}

/** Targets up to this many bytes are small events: a push, watch or create of its natural size is one. */
const SMALL_EVENT_MAX_BYTES = 2_500;

/**
 * Picks event `id`'s type (the everyday mix) and fills its payload so that the event's JSON reaches
 * `target` bytes (within a few bytes) in the type's own text field: an issue's body, a comment's body, a
 * release's notes. A type without such a field (a push, a watch) keeps its natural size for a small target
 * and becomes an issue, comment or release for a larger one; events already larger stay as they are.
 */
export function sizedEvent(
  id: number,
  target: number,
  build: (type: EventType) => BuiltPayload,
  sizeOf: (payload: Record<string, unknown>, type: EventType) => number,
): { type: EventType; payload: Record<string, unknown> } {
  let type = mixedEventType(id);
  let built = build(type);
  if (!built.setText && target > SMALL_EVENT_MAX_BYTES) {
    type = TEXT_EVENT_TYPES[id % TEXT_EVENT_TYPES.length];
    built = build(type);
  }
  const { payload, setText } = built;
  if (!setText || target - sizeOf(payload, type) <= 0) return { type, payload };
  // JSON escapes of newlines are measured, not guessed: set, measure, trim once.
  setText('');
  const length = target - sizeOf(payload, type);
  setText(prose(length, id));
  const over = sizeOf(payload, type) - target;
  if (over > 0) setText(prose(Math.max(0, length - over), id));
  return { type, payload };
}
