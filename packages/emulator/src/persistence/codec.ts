/**
 * Turns a module's live state into JSON and back without the module describing its fields: Maps, Sets,
 * Buffers, Dates, `undefined` and non-finite numbers are tagged, and an object reached twice (an import both
 * in the current map and in the history) is written once and referenced after, so it comes back as one
 * object again. Anything else that is not plain data (a function, a class instance) is refused with its path,
 * so a state that cannot survive a restart fails in the unit tests rather than coming back half.
 *
 * Tagged values are objects with a `$t` key; a plain object that itself has a `$t` key is escaped.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isContainer(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Buffer.isBuffer(value) && !(value instanceof Date);
}

function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Counts how often each container is reached, so shared ones get an id. */
function countReferences(value: unknown, seen: Map<object, number>): void {
  if (!isContainer(value)) return;
  const count = seen.get(value) ?? 0;
  seen.set(value, count + 1);
  if (count > 0) return;
  const children = value instanceof Map ? [...value].flat() : value instanceof Set ? [...value] : Array.isArray(value) ? value : Object.values(value);
  for (const child of children) countReferences(child, seen);
}

export function encodeState(value: unknown): Json {
  const counts = new Map<object, number>();
  countReferences(value, counts);
  const ids = new Map<object, number>();
  const encode = (v: unknown, path: string): Json => {
    if (v === undefined) return { $t: 'undefined' };
    if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
    if (typeof v === 'number') return Number.isFinite(v) ? v : { $t: 'Number', v: String(v) };
    if (typeof v === 'bigint') return { $t: 'BigInt', v: v.toString() };
    if (Buffer.isBuffer(v)) return { $t: 'Buffer', v: v.toString('base64') };
    if (v instanceof Date) return { $t: 'Date', v: v.getTime() };
    if (typeof v !== 'object') throw new TypeError(`emulator state at ${path} is a ${typeof v}, which cannot be saved`);
    const known = ids.get(v);
    if (known !== undefined) return { $t: 'Ref', id: known };
    let body: Json;
    let id: number | undefined;
    if ((counts.get(v) ?? 0) > 1) ids.set(v, (id = ids.size));
    if (v instanceof Map) body = { $t: 'Map', v: [...v].map(([k, x], i) => [encode(k, `${path}<key ${i}>`), encode(x, `${path}.get(${String(k)})`)]) };
    else if (v instanceof Set) body = { $t: 'Set', v: [...v].map((x, i) => encode(x, `${path}<item ${i}>`)) };
    else if (Array.isArray(v)) body = v.map((x, i) => encode(x, `${path}[${i}]`));
    else if (isPlain(v)) {
      const out: Record<string, Json> = {};
      for (const [k, x] of Object.entries(v)) out[k] = encode(x, `${path}.${k}`);
      body = '$t' in out ? { $t: 'Object', v: out } : out;
    } else throw new TypeError(`emulator state at ${path} is a ${v.constructor?.name ?? 'class instance'}, which cannot be saved`);
    return id === undefined ? body : { $t: 'Def', id, v: body };
  };
  return encode(value, 'state');
}

export function decodeState(json: unknown): unknown {
  const defined = new Map<number, unknown>();
  const decode = (v: unknown, define?: number): unknown => {
    if (Array.isArray(v)) {
      const out: unknown[] = [];
      if (define !== undefined) defined.set(define, out);
      for (const x of v) out.push(decode(x));
      return out;
    }
    if (typeof v !== 'object' || v === null) return v;
    const tagged = v as { $t?: unknown; v?: unknown; id?: unknown };
    switch (tagged.$t) {
      case undefined:
        return decodeObject(v as Record<string, unknown>, define);
      case 'undefined':
        return undefined;
      case 'Number':
        return Number(tagged.v);
      case 'BigInt':
        return BigInt(String(tagged.v));
      case 'Buffer':
        return Buffer.from(String(tagged.v), 'base64');
      case 'Date':
        return new Date(Number(tagged.v));
      case 'Object':
        return decodeObject(tagged.v as Record<string, unknown>, define);
      case 'Def':
        return decode(tagged.v, Number(tagged.id));
      case 'Ref':
        if (!defined.has(Number(tagged.id))) throw new TypeError(`saved emulator state refers to object ${String(tagged.id)} before defining it`);
        return defined.get(Number(tagged.id));
      case 'Map': {
        const out = new Map<unknown, unknown>();
        if (define !== undefined) defined.set(define, out);
        for (const [k, x] of tagged.v as [unknown, unknown][]) out.set(decode(k), decode(x));
        return out;
      }
      case 'Set': {
        const out = new Set<unknown>();
        if (define !== undefined) defined.set(define, out);
        for (const x of tagged.v as unknown[]) out.add(decode(x));
        return out;
      }
      default:
        throw new TypeError(`saved emulator state has an unknown tag ${JSON.stringify(tagged.$t)}`);
    }
  };
  // Registered before its fields are read, so a cycle back to it resolves.
  const decodeObject = (v: Record<string, unknown>, define?: number) => {
    const out: Record<string, unknown> = {};
    if (define !== undefined) defined.set(define, out);
    for (const [k, x] of Object.entries(v)) out[k] = decode(x);
    return out;
  };
  return decode(json);
}
