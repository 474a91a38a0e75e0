/**
 * Field names as Google's JSON front end takes them: the proto3 JSON mapping accepts each field by its
 * lowerCamelCase JSON name or its original snake_case proto name (`retentionDays` or `retention_days`), in
 * bodies (`proto-json.ts`) and in field masks.
 */

/** `retention_days` → `retentionDays`; a camelCase name stays as it is. */
export function jsonName(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** A field mask's paths (`updateMask=retentionDays,description`) under their JSON names. */
export function maskPaths(mask: string | null): string[] {
  return (mask ?? '')
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean)
    .map((path) => path.split('.').map(jsonName).join('.'));
}
