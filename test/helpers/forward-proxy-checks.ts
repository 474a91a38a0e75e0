/**
 * The proxy tests' checks over `forward-proxy.ts`'s servers. Apart from it because they need vitest, and
 * `bench:download --proxy` loads the servers outside vitest (which refuses to be loaded there).
 */
import { expect } from 'vitest';
import type { FleetTest } from './fleet';
import { startProxyOnlyGate, type ProxyOnlyGate } from './forward-proxy';

/** `startProxyOnlyGate`, closed after the test. */
export async function gateClosedLater(fleet: Pick<FleetTest, 'closeLater'>, port: () => number, tls?: { certFile: string; keyFile: string }): Promise<ProxyOnlyGate> {
  const g = await startProxyOnlyGate(port, tls);
  fleet.closeLater(() => g.close());
  return g;
}

/** Every gate was reached, and only through the proxy. */
export function expectOnlyThroughProxy(gates: Record<string, ProxyOnlyGate>, targets: Set<string>): void {
  for (const [name, g] of Object.entries(gates)) {
    expect(g.refused(), `connections to ${name} that bypassed the proxy`).toBe(0);
    expect(g.accepted(), `connections to ${name} through the proxy`).toBeGreaterThan(0);
    expect(targets.has(g.host), `${name} (${g.host}) in the proxy's log`).toBe(true);
  }
}
