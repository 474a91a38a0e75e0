/**
 * Field names as Google's JSON front end takes them: the proto3 JSON mapping accepts each field by its
 * lowerCamelCase JSON name or its original snake_case proto name (`retentionDays` or `retention_days`), in
 * bodies and in field masks, and ignores output-only fields a client sends back (a resource it read,
 * changed and sent whole). The emulated Google APIs read bodies and masks through these.
 */

/** `retention_days` → `retentionDays`; a camelCase name stays as it is. */
export function jsonName(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** The object with its top-level keys under their JSON names, output-only fields dropped; anything else as given. */
export function jsonNamed(body: unknown, outputOnly: readonly string[] = []): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    const name = jsonName(key);
    if (!outputOnly.includes(name)) out[name] = value;
  }
  return out;
}

/** A field mask's paths (`updateMask=retentionDays,description`) under their JSON names. */
export function maskPaths(mask: string | null): string[] {
  return (mask ?? '')
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean)
    .map((path) => path.split('.').map(jsonName).join('.'));
}
