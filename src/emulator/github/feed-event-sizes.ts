/**
 * Realistic sizes for emulated feed events. Real events are not 0.6 KB: a push carries up to 20
 * commits with their messages, an issue or pull request its whole body, so most events are a few KB
 * and a long tail reaches tens of KB. Sizes are a deterministic function of the event id (tests can
 * predict them) and are reached by filling the type's own large fields, never by an invented field.
 */
import { createHash } from 'node:crypto';

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

const sha = (s: string) => createHash('sha1').update(s).digest('hex');

/**
 * Fills an event's payload so that its JSON reaches `target` bytes (within a few bytes): commits of a
 * push, the description of a create, the body of an issue. Events already larger stay as they are.
 * Returns the (possibly changed) type and payload.
 */
export function sizedPayload(
  event: { id: string; type: string; payload: Record<string, unknown> },
  target: number,
  base: { repoUrl: string; actorLogin: string; actorUrl: string },
  sizeOf: (payload: Record<string, unknown>, type: string) => number,
): { type: string; payload: Record<string, unknown> } {
  const id = Number(event.id);
  let type = event.type;
  let payload = { ...event.payload };
  const room = () => target - sizeOf(payload, type);
  if (room() <= 0) return { type, payload };
  // A watch carries nothing large: a large event of that slot is an issue being opened.
  if (type === 'WatchEvent' && room() > 400) {
    type = 'IssuesEvent';
    payload = {
      action: 'opened',
      issue: {
        id: id * 3,
        number: (id % 9_000) + 1,
        title: prose(60, id),
        user: { login: base.actorLogin, url: base.actorUrl },
        labels: [],
        state: 'open',
        locked: false,
        comments: 0,
        url: `${base.repoUrl}/issues/${(id % 9_000) + 1}`,
        created_at: null,
        body: '',
      },
    };
  }
  /** Sets the one text field that takes the remaining room; JSON escapes of newlines are measured, not guessed. */
  const fill = (set: (text: string) => void) => {
    set('');
    const length = target - sizeOf(payload, type);
    set(prose(length, id));
    const over = sizeOf(payload, type) - target;
    if (over > 0) set(prose(Math.max(0, length - over), id));
  };
  if (type === 'PushEvent') {
    // Up to 20 commits, as GitHub lists; each gets a share of the room for its message.
    const count = Math.max(1, Math.min(20, Math.ceil(room() / 2_000)));
    const commits = Array.from({ length: count }, (_, i) => ({
      sha: sha(`commit${id}-${i}`),
      author: { email: `${base.actorLogin}@users.noreply.example.test`, name: base.actorLogin },
      message: '',
      distinct: true,
      url: `${base.repoUrl}/commits/${sha(`commit${id}-${i}`)}`,
    }));
    payload = { ...payload, size: count, distinct_size: count, commits };
    const share = Math.max(0, Math.floor(room() / count));
    commits.forEach((c, i) => (c.message = prose(share, id + i)));
    // The last commit's message takes whatever room is left.
    fill((text) => (commits[count - 1].message = text));
    return { type, payload };
  }
  if (type === 'CreateEvent') {
    fill((text) => (payload.description = text));
    return { type, payload };
  }
  if (type === 'IssuesEvent') {
    const issue = payload.issue as Record<string, unknown>;
    fill((text) => (issue.body = text));
    return { type, payload };
  }
  return { type, payload };
}
