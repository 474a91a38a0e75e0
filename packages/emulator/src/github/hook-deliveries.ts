/**
 * The emulated webhook's state types and how its deliveries are shown (spec 001 and GitHub's description:
 * `hook-delivery-item` in lists, `hook-delivery` with the recorded request and response for one).
 */
import { hubSignature } from './signature';
import type { Account, Repository } from './fixture';
import type { HookConfig } from './hook-config';

export interface Hook {
  id: number;
  scope: { kind: 'org'; org: Account } | { kind: 'repo'; repo: Repository };
  events: string[];
  active: boolean;
  config: HookConfig;
  createdAt: number;
  updatedAt: number;
}

export interface EmulatedDelivery {
  id: number;
  guid: string;
  hookId: number;
  at: number;
  redelivery: boolean;
  durationMs: number;
  statusCode: number;
  event: string;
  action: string | null;
  payload: Record<string, unknown>;
}

export interface RedeliveryRecord {
  hookId: number;
  /** The delivery the attempt was requested for. */
  deliveryId: number;
  /** The delivery the attempt created, once it has been made (`redeliveryDelayMs` after the request). */
  newDeliveryId?: number;
  guid: string;
  at: number;
  caller: string;
}

export function statusText(code: number): string {
  if (code >= 200 && code < 300) return 'OK';
  if (code === 0) return 'failed to connect to host';
  return `Invalid HTTP Response: ${code}`;
}

export const deliveryObject = (d: EmulatedDelivery, h: Hook) => ({
  id: d.id,
  guid: d.guid,
  delivered_at: new Date(d.at).toISOString(),
  redelivery: d.redelivery,
  duration: d.durationMs / 1000,
  status: statusText(d.statusCode),
  status_code: d.statusCode,
  event: d.event,
  action: d.action,
  installation_id: null,
  repository_id: h.scope.kind === 'repo' ? h.scope.repo.id : null,
  throttled_at: null,
});

export const deliveryDetail = (d: EmulatedDelivery, h: Hook) => {
  const body = JSON.stringify(d.payload);
  const headers: Record<string, string> = {
    Accept: '*/*',
    'User-Agent': 'GitHub-Hookshot/emulator',
    'X-GitHub-Delivery': d.guid,
    'X-GitHub-Event': d.event,
    'X-GitHub-Hook-ID': String(h.id),
    'X-GitHub-Hook-Installation-Target-ID': String(h.scope.kind === 'org' ? h.scope.org.id : h.scope.repo.id),
    'X-GitHub-Hook-Installation-Target-Type': h.scope.kind === 'org' ? 'organization' : 'repository',
    'content-type': h.config.content_type === 'form' ? 'application/x-www-form-urlencoded' : 'application/json',
  };
  if (h.config.secret !== undefined) {
    headers['X-Hub-Signature-256'] = hubSignature('sha256', h.config.secret, body);
    headers['X-Hub-Signature'] = hubSignature('sha1', h.config.secret, body);
  }
  return {
    ...deliveryObject(d, h),
    url: h.config.url,
    request: { headers, payload: d.payload },
    response: { headers: {}, payload: d.statusCode >= 200 && d.statusCode < 300 ? 'ok' : '' },
  };
};
