/**
 * Where a benchmark's mutation time goes: every mutation's arrival at the emulator (its rate limiter notes
 * each one), then the gaps between them by size and the requests that reached the API more than once.
 * With one worker holding consecutive slots, mutations arrive `spacing + MUTATION_SEND_MARGIN_MS` apart;
 * every gap beyond that is time the fleet's mutation floor did not need.
 */
import type { RateLimiter } from '../packages/emulator/src/rate-limiter';
import { slotSpacingMs } from '../src/processes/rate-governor/mutation-slots';

export interface MutationArrival {
  at: number;
  request: string;
}

/** Records each mutation (non-GET/HEAD) as the emulator's rate limiter notes it. */
export function recordMutations(limiter: RateLimiter): MutationArrival[] {
  const arrivals: MutationArrival[] = [];
  const note = limiter.noteMethod.bind(limiter);
  limiter.noteMethod = (caller, method, now, path = '') => {
    if (method !== 'GET' && method !== 'HEAD') arrivals.push({ at: now, request: `${method} ${path}` });
    note(caller, method, now, path);
  };
  return arrivals;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Lines for the bench's report: repeats, lead-in and tail, and the gaps by size with the time beyond back-to-back slots. */
export function describeMutationArrivals(arrivals: MutationArrival[], startedAt: number, endedAt: number, spacingMs: number): string[] {
  if (arrivals.length < 2) return [`mutations: ${arrivals.length}`];
  const chained = slotSpacingMs(spacingMs, true);
  const times = new Map<string, number[]>();
  // A POST's path names a collection (each one creates something new); other mutations name what they change.
  for (const a of arrivals) if (!a.request.startsWith('POST ')) times.set(a.request, [...(times.get(a.request) ?? []), a.at]);
  const repeated = [...times].filter(([, at]) => at.length > 1);
  const repeatGaps = repeated.map(([, at]) => at[1] - at[0]).sort((a, b) => a - b);
  const lines = [
    `mutations: ${arrivals.length} sent; of the ${times.size} non-POST ones, ${repeated.length} sent more than once` +
      (repeated.length ? ` (between first and second: min ${seconds(repeatGaps[0])}, median ${seconds(repeatGaps[Math.floor(repeatGaps.length / 2)])}, max ${seconds(repeatGaps[repeatGaps.length - 1])}; e.g. ${repeated[0][0]})` : ''),
    `first mutation after ${seconds(arrivals[0].at - startedAt)}; last ${seconds(endedAt - arrivals[arrivals.length - 1].at)} before the end`,
  ];
  const buckets = [chained + 20, 1300, 1500, 3000, 10_000, Infinity];
  const counts = buckets.map(() => ({ n: 0, beyond: 0 }));
  for (let i = 1; i < arrivals.length; i++) {
    const gap = arrivals[i].at - arrivals[i - 1].at;
    const b = counts[buckets.findIndex((limit) => gap < limit)];
    b.n++;
    b.beyond += Math.max(0, gap - chained);
  }
  let lower = 0;
  const parts = buckets.map((limit, i) => {
    const label = limit === Infinity ? `≥${seconds(lower)}` : `<${seconds(limit)}`;
    lower = limit;
    return `${label}: ${counts[i].n} (+${seconds(counts[i].beyond)})`;
  });
  const beyond = counts.reduce((s, c) => s + c.beyond, 0);
  lines.push(`gaps (time beyond ${chained} ms each): ${parts.join(', ')}; total beyond ${seconds(beyond)}`);
  // Where in the run the time went: the mutations in quarters, each with its time beyond back-to-back slots.
  const quarter = Math.ceil((arrivals.length - 1) / 4);
  const quarters = [0, 1, 2, 3].map((q) => {
    let sum = 0;
    for (let i = 1 + q * quarter; i <= Math.min(arrivals.length - 1, (q + 1) * quarter); i++) sum += Math.max(0, arrivals[i].at - arrivals[i - 1].at - chained);
    return seconds(sum);
  });
  lines.push(`time beyond by quarter of the mutations: ${quarters.join(' / ')}`);
  return lines;
}
