/**
 * How the emulator reads a request body: counted as it arrives, and refused past `maxBytes` with 413, as GitHub
 * refuses an oversized body. The emulator's own reader and cap (docs/emulator.md, "Request bodies"), not the HTTP
 * core's: a stand-in shares no parser or constant with the code it tests.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The default cap on a request body: 32 MiB. longhaul's largest request is a sink batch (about 1 MB) or a
 * migration start naming 5,000 repositories (about 0.5 MB); Cloud Logging refuses entries:write bodies past 10 MB.
 */
export const DEFAULT_MAX_REQUEST_BYTES = 32 * 1024 * 1024;

/** A body past the cap: the read stopped there (`bytesRead`, at most the cap plus the chunk that crossed it). */
export class RequestTooLarge extends Error {
  constructor(
    readonly maxBytes: number,
    readonly bytesRead: number,
  ) {
    super(`the request body is larger than ${maxBytes} bytes, the emulator's cap`);
  }
}

/**
 * The request's body, at most `maxBytes`. A `content-length` past the cap is refused before a byte is read; a body
 * that grows past it stops being read at the crossing chunk (the request is paused, not drained: `refuseTooLarge`
 * answers and closes the connection).
 */
export function readRequestBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.reject(new RequestTooLarge(maxBytes, 0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytesRead = 0;
    const done = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    const onData = (chunk: Buffer) => {
      bytesRead += chunk.length;
      if (bytesRead > maxBytes) {
        done();
        req.pause();
        reject(new RequestTooLarge(maxBytes, bytesRead));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      resolve(Buffer.concat(chunks));
    };
    const onError = (err: Error) => {
      done();
      reject(err);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

/** Answers 413 with `body` and closes the connection once it is sent (the rest of the request is never read). */
export function refuseTooLarge(req: IncomingMessage, res: ServerResponse, body: unknown): void {
  res.writeHead(413, { 'content-type': 'application/json; charset=utf-8', connection: 'close' });
  res.end(JSON.stringify(body), () => req.socket.destroy());
}
