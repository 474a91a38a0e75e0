/**
 * Preloaded (`node --require`) into a worker process that a test starts with `recordSends` (or, for a release whose
 * code the test cannot change, through `NODE_OPTIONS`): one line on stderr for every HTTP request the process
 * sends, written when undici puts its headers on the socket (`undici:client:sendHeaders`, a diagnostics channel
 * undici publishes to; no product code is involved), read back with `sentRequests`; and one for every answer's
 * status and rate-limit headers when undici read them (`undici:request:headers`), read back with `waitsAnswered`
 * (both in `fleet-news.ts`, which knows the lines' prefixes). The time is this process's clock, the one its
 * `limit-learned` log lines are stamped with, so a test compares a worker's sends with what that worker knew when
 * it sent them.
 *
 * Plain CommonJS: node passes its flags on to the worker's workflow thread, where no TypeScript loader runs.
 */
'use strict';
const { subscribe } = require('node:diagnostics_channel');
const { writeSync } = require('node:fs');

subscribe('undici:client:sendHeaders', ({ request }) => {
  const line = { at: Date.now(), origin: String(request.origin ?? ''), method: request.method, path: request.path };
  // Synchronous, so the line is out before the answer can be (and survives a SIGKILL right after).
  writeSync(2, `longhaul-test-sent ${JSON.stringify(line)}\n`);
});

/** The headers of an answer that say how long to stay away (GitHub's rate-limit headers, `retry-after`). */
const TOLD = new Set(['x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after']);

// What the process was told: each answer's status and rate-limit headers, when undici read them (`answeredBy`), so a
// test judges a process that logs nothing about its limits (an old release) by what its answers had said.
subscribe('undici:request:headers', ({ request, response }) => {
  const told = {};
  const raw = response.headers ?? [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = String(raw[i]).toLowerCase();
    if (TOLD.has(name)) told[name] = String(raw[i + 1]);
  }
  const line = { at: Date.now(), origin: String(request.origin ?? ''), method: request.method, path: request.path, status: response.statusCode, told };
  writeSync(2, `longhaul-test-answer ${JSON.stringify(line)}\n`);
});
