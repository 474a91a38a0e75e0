/**
 * Preloaded (`node --require`) into a worker process that a test starts with `recordSends`: one line on stderr
 * for every HTTP request the process sends, written when undici puts its headers on the socket
 * (`undici:client:sendHeaders`, a diagnostics channel undici publishes to; no product code is involved). Read
 * back with `sentRequests` (`fleet-news.ts`, which knows the line's prefix). The time is this process's clock, the
 * one its `limit-learned` log lines are stamped with, so a test compares a worker's sends with what that worker
 * knew when it sent them.
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
