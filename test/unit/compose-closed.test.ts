/**
 * The production stack is closed by default: docker-compose.yml, rendered the way `docker compose config`
 * renders it (`${VAR:-default}` interpolation from an environment without longhaul's settings, then the `ports:`
 * short syntax `[HOST_IP:]HOST_PORT:CONTAINER_PORT[/PROTOCOL]`), publishes nothing on every interface, keeps the
 * worker's metrics on the compose network, and runs every service with no-new-privileges.
 *
 * Docker's compose plugin is not on the development machine; Debian's docker-compose 1.29 (which refuses the
 * top-level `name:`) rendered the same file without that line to the same ports (docs/operations.md).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// js-yaml is a development dependency; its types are not installed, hence this one signature.
const { load } = createRequire(__filename)('js-yaml') as { load(text: string): unknown };
const COMPOSE = readFileSync(join(__dirname, '..', '..', 'docker-compose.yml'), 'utf8');

interface Service {
  ports?: (string | number | { host_ip?: string; published?: string | number; target: number })[];
  expose?: (string | number)[];
  security_opt?: string[];
  read_only?: boolean;
  environment?: Record<string, string>;
}

/** Compose's interpolation: `$$`, `${VAR}`, `${VAR:-default}` (unset or empty), `${VAR-default}` (unset), `$VAR`. */
function interpolate(text: string, env: Record<string, string | undefined>): string {
  return text.replace(/\$(\$|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g, (_m, _all, braced?: string, op?: string, fallback?: string, bare?: string) => {
    if (_all === '$') return '$';
    const name = (braced ?? bare)!;
    const value = env[name];
    if (op === ':-') return value ? value : (fallback ?? '');
    if (op === '-') return value !== undefined ? value : (fallback ?? '');
    return value ?? '';
  });
}

function render(env: Record<string, string | undefined>): Record<string, Service> {
  return (load(interpolate(COMPOSE, env)) as { services: Record<string, Service> }).services;
}

/** Each published port as `{ hostIp, published, target }`; a short entry without a host IP publishes on every interface. */
function published(service: Service): { hostIp: string; published: string; target: string }[] {
  return (service.ports ?? []).map((entry) => {
    if (typeof entry === 'object') return { hostIp: entry.host_ip ?? '', published: String(entry.published ?? ''), target: String(entry.target) };
    const spec = String(entry).replace(/\/(tcp|udp|sctp)$/, '');
    const ipv6 = /^\[([^\]]+)\]:(.+)$/.exec(spec);
    const [hostIp, rest] = ipv6 ? [ipv6[1], ipv6[2]] : spec.split(':').length === 3 ? [spec.slice(0, spec.indexOf(':')), spec.slice(spec.indexOf(':') + 1)] : ['', spec];
    const parts = rest.split(':');
    return parts.length === 1 ? { hostIp, published: '', target: parts[0] } : { hostIp, published: parts[0], target: parts[1] };
  });
}

const LOOPBACK = new Set(['127.0.0.1', '::1']);

describe('docker-compose.yml', () => {
  const services = render({});

  it('publishes no port on every interface by default: each has a loopback host address', () => {
    const ports = Object.entries(services).flatMap(([name, s]) => published(s).map((p) => ({ name, ...p })));
    expect(ports.map((p) => `${p.name} ${p.published}->${p.target}`).sort()).toEqual(['temporal 7233->7233', 'temporal-ui 8233->8080']);
    for (const port of ports) expect(LOOPBACK.has(port.hostIp), `${port.name} publishes ${port.published} on "${port.hostIp || 'every interface'}"`).toBe(true);
  });

  it("keeps the worker's metrics on the compose network", () => {
    expect(services.worker.ports).toBeUndefined();
    expect(services.worker.expose).toEqual(['9464']);
    for (const [name, s] of Object.entries(services)) expect(published(s).some((p) => p.target === '9464' || p.published === '9464'), name).toBe(false);
  });

  it('publishes on another address only when the operator says so (LONGHAUL_PUBLISH_ADDRESS)', () => {
    const opened = render({ LONGHAUL_PUBLISH_ADDRESS: '0.0.0.0' });
    expect(published(opened.temporal)).toEqual([{ hostIp: '0.0.0.0', published: '7233', target: '7233' }]);
    // Set but empty counts as unset (`:-`): an empty value never means every interface.
    expect(published(render({ LONGHAUL_PUBLISH_ADDRESS: '' })['temporal-ui'])[0].hostIp).toBe('127.0.0.1');
  });

  it('runs every service with no-new-privileges, and the longhaul services on read-only root file systems', () => {
    for (const [name, s] of Object.entries(services)) expect(s.security_opt, name).toContain('no-new-privileges:true');
    expect(services.worker.read_only).toBe(true);
    expect(services['temporal-setup'].read_only).toBe(true);
  });

  it('reads the short port syntax and interpolation as compose does', () => {
    expect(published({ ports: ['7233:7233', '127.0.0.1:80:8080/tcp', '[::1]:1:2', '9000', { host_ip: '127.0.0.1', published: 5, target: 6 }] })).toEqual([
      { hostIp: '', published: '7233', target: '7233' },
      { hostIp: '127.0.0.1', published: '80', target: '8080' },
      { hostIp: '::1', published: '1', target: '2' },
      { hostIp: '', published: '', target: '9000' },
      { hostIp: '127.0.0.1', published: '5', target: '6' },
    ]);
    expect(interpolate('${A:-x} ${B-y} ${C} $$D $E', { B: '', E: 'e' })).toBe('x   $D e');
  });
});
