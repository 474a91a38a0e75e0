/**
 * HTTP/1.1 framing for the storage transport (`transport.ts`): the request it sends, the response head it
 * parses, and where the body ends (`Content-Length`, `chunked`, or the connection's close; RFC 9112 §6).
 * Pure functions over bytes, so every case is tested without a socket.
 */

/** The response head is refused beyond this size (a real one is well under 8 KiB). */
export const MAX_HEAD_BYTES = 64 * 1024;

export interface ResponseHead {
  statusCode: number;
  /** Lower-case names; repeated fields joined with `, `. */
  headers: Record<string, string>;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * The request bytes of a GET; a header name or value that could split the request throws instead. `absolute`: the
 * target as a forward proxy takes it (`GET http://host/path`).
 */
export function requestHead(url: URL, headers: Record<string, string>, absolute = false): string {
  const target = `${absolute ? url.origin : ''}${url.pathname || '/'}${url.search}`;
  const lines = [`GET ${target} HTTP/1.1`, `host: ${url.host}`];
  for (const [name, value] of Object.entries(headers)) {
    if (!TOKEN.test(name) || /[\r\n\0]/.test(value)) throw new TypeError(`invalid request header ${JSON.stringify(name)}`);
    lines.push(`${name}: ${value}`);
  }
  // One answer per connection: an archive is one long body, and nothing reuses the socket.
  lines.push('connection: close', '', '');
  return lines.join('\r\n');
}

/**
 * The head at the start of `bytes` and its length, or undefined while `\r\n\r\n` has not arrived yet.
 * Throws on a malformed head.
 */
export function parseHead(bytes: Buffer): { head: ResponseHead; length: number } | undefined {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) {
    if (bytes.length > MAX_HEAD_BYTES) throw new Error(`the response head is larger than ${MAX_HEAD_BYTES} bytes`);
    return undefined;
  }
  const [statusLine, ...fields] = bytes.toString('latin1', 0, end).split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(statusLine);
  if (!status) throw new Error(`not an HTTP/1.1 status line: ${JSON.stringify(statusLine.slice(0, 80))}`);
  const headers: Record<string, string> = {};
  for (const field of fields) {
    const colon = field.indexOf(':');
    if (colon <= 0 || !TOKEN.test(field.slice(0, colon))) throw new Error(`malformed response header ${JSON.stringify(field.slice(0, 80))}`);
    const name = field.slice(0, colon).toLowerCase();
    const value = field.slice(colon + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  return { head: { statusCode: Number(status[1]), headers }, length: end + 4 };
}

/** Where a response body ends. */
export interface BodyFramer {
  /**
   * Hands the body bytes of `bytes` to `emit` (views of it, valid during the call) and returns how many
   * input bytes it used; `done` once the body is complete (bytes after it are not the body's).
   */
  feed(bytes: Buffer, emit: (body: Buffer) => void): number;
  readonly done: boolean;
  /** Whether the connection's end completes the body (no length was announced). */
  readonly endsWithClose: boolean;
}

/** The framer for a GET's answer (RFC 9112 §6.3: no body for 1xx, 204, 304; chunked wins over a length). */
export function bodyFramer(head: ResponseHead): BodyFramer {
  const { statusCode, headers } = head;
  if (statusCode === 204 || statusCode === 304 || statusCode < 200) return new LengthFramer(0);
  if (/(^|,)\s*chunked\s*$/i.test(headers['transfer-encoding'] ?? '')) return new ChunkedFramer();
  const length = headers['content-length'];
  if (length !== undefined) {
    if (!/^\d+$/.test(length)) throw new Error(`invalid Content-Length ${JSON.stringify(length)}`);
    return new LengthFramer(Number(length));
  }
  return new LengthFramer(Number.POSITIVE_INFINITY);
}

class LengthFramer implements BodyFramer {
  constructor(private remaining: number) {}

  get done(): boolean {
    return this.remaining === 0;
  }

  get endsWithClose(): boolean {
    return this.remaining === Number.POSITIVE_INFINITY;
  }

  feed(bytes: Buffer, emit: (body: Buffer) => void): number {
    const take = Math.min(bytes.length, this.remaining);
    if (take > 0) emit(take === bytes.length ? bytes : bytes.subarray(0, take));
    this.remaining -= take;
    return take;
  }
}

/** `chunked` transfer coding: size line, data, CRLF, …, a zero-size chunk, trailer fields, an empty line. */
class ChunkedFramer implements BodyFramer {
  readonly endsWithClose = false;
  private state: 'size' | 'data' | 'data-end' | 'trailer' | 'done' = 'size';
  private line = '';
  private remaining = 0;

  get done(): boolean {
    return this.state === 'done';
  }

  feed(bytes: Buffer, emit: (body: Buffer) => void): number {
    let at = 0;
    while (at < bytes.length && this.state !== 'done') {
      if (this.state === 'data') {
        const take = Math.min(bytes.length - at, this.remaining);
        emit(bytes.subarray(at, at + take));
        at += take;
        this.remaining -= take;
        if (this.remaining === 0) this.state = 'data-end';
        continue;
      }
      // Line-oriented states: gather up to LF.
      const lf = bytes.indexOf(0x0a, at);
      const stop = lf < 0 ? bytes.length : lf + 1;
      this.line += bytes.toString('latin1', at, stop);
      at = stop;
      if (this.line.length > 4096) throw new Error('a chunk-size or trailer line is longer than 4096 bytes');
      if (lf < 0) continue;
      const line = this.line.replace(/\r?\n$/, '');
      this.line = '';
      this.takeLine(line);
    }
    return at;
  }

  private takeLine(line: string): void {
    if (this.state === 'data-end') {
      if (line !== '') throw new Error('a chunk does not end with CRLF');
      this.state = 'size';
    } else if (this.state === 'trailer') {
      if (line === '') this.state = 'done';
    } else {
      const size = /^([0-9a-fA-F]{1,12})\s*(;.*)?$/.exec(line);
      if (!size) throw new Error(`invalid chunk size line ${JSON.stringify(line.slice(0, 40))}`);
      this.remaining = parseInt(size[1], 16);
      this.state = this.remaining === 0 ? 'trailer' : 'data';
    }
  }
}
