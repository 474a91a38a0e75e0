/**
 * A webhook's `config` object as the emulator accepts it (spec 001): only the permitted keys, strings
 * where strings are due, a valid http(s) URL, `json` or `form` content. Errors are the service's own
 * 422 messages.
 */
import { EmulatorHttpError } from '../http-error';

export interface HookConfig {
  url: string;
  content_type: string;
  insecure_ssl: string;
  secret?: string;
}

const KNOWN_CONFIG = ['url', 'content_type', 'secret', 'insecure_ssl'];

/** Validates a request's `config` (`urlRequired` on create); `extra` keys are permitted too (org hooks). */
export function parseConfig(value: unknown, urlRequired: boolean, extra: string[] = []): Partial<HookConfig> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new EmulatorHttpError(422, 'Invalid request.\n\nFor "config", value is not an object.');
  const c = value as Record<string, unknown>;
  for (const key of Object.keys(c)) {
    if (!KNOWN_CONFIG.includes(key) && !extra.includes(key)) throw new EmulatorHttpError(422, `Invalid request.\n\n"${key}" is not a permitted key.`);
  }
  if (urlRequired && c.url === undefined) throw new EmulatorHttpError(422, 'Invalid request.\n\n"url" wasn\'t supplied.');
  for (const key of ['url', 'content_type', 'secret', ...extra]) {
    if (c[key] !== undefined && typeof c[key] !== 'string') throw new EmulatorHttpError(422, `Invalid request.\n\nFor "${key}", ${JSON.stringify(c[key])} is not a string.`);
  }
  if (c.insecure_ssl !== undefined && typeof c.insecure_ssl !== 'string' && typeof c.insecure_ssl !== 'number') {
    throw new EmulatorHttpError(422, 'Invalid request.\n\nFor "insecure_ssl", value is not a string or number.');
  }
  if (c.url !== undefined) {
    try {
      const u = new URL(c.url as string);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
    } catch {
      throw new EmulatorHttpError(422, 'Validation Failed', { errors: [{ resource: 'Hook', code: 'custom', message: 'Config url is not a valid URL' }] });
    }
  }
  if (c.content_type !== undefined && c.content_type !== 'json' && c.content_type !== 'form') {
    throw new EmulatorHttpError(422, 'Validation Failed', { errors: [{ resource: 'Hook', code: 'custom', message: 'Config content_type must be json or form' }] });
  }
  const out: Partial<HookConfig> = {};
  if (c.url !== undefined) out.url = c.url as string;
  if (c.content_type !== undefined) out.content_type = c.content_type as string;
  if (c.secret !== undefined) out.secret = c.secret as string;
  if (c.insecure_ssl !== undefined) out.insecure_ssl = String(c.insecure_ssl);
  return out;
}
