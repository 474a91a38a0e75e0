/**
 * Cloud DNS v1 change activities: one HTTP call each (the change search pages through a list). A Change is
 * Cloud DNS's long-running operation: `status` `pending` until it is `done`.
 */
import { googleFor, type ActivityDeps } from '../../../activities/context';
import type { OperationView } from '../model';
import type { ResourceRecordSet } from '../input';
import { answer, expectItems, expectShape, optional, required } from '../../../http/answer';
import { countPoll } from '../../../telemetry/metrics';
import { quietly } from '../../../activities/quiet-poll';
import { Process } from '../names';

/** Cloud DNS `Change`. */
const DNS_CHANGE = { id: required('string'), status: required('string'), startTime: optional('string') };
export const DNS_CHANGE_SHAPE = answer(DNS_CHANGE);
/** Cloud DNS `changes.list` (`changes` is left out when empty, as Google leaves out empty repeated fields). */
export const DNS_CHANGE_LIST_SHAPE = answer({ changes: optional('array'), nextPageToken: optional('string') });
/** A listed change as the lookup of a lost answer compares it: when it started and what it changed. */
export const DNS_LISTED_CHANGE_SHAPE = answer({ ...DNS_CHANGE, startTime: required('string'), additions: optional('array'), deletions: optional('array') });

interface DnsChange {
  id: string;
  status: string;
  startTime?: string;
  additions?: ResourceRecordSet[];
  deletions?: ResourceRecordSet[];
}

function changeView(change: DnsChange): OperationView {
  const done = change.status === 'done';
  return { name: change.id, done, state: change.status, ...(done ? { response: { id: change.id, startTime: change.startTime } } : {}) };
}

function zonePath(input: { project: string; zone: string }): string {
  return `/dns/v1/projects/${encodeURIComponent(input.project)}/managedZones/${encodeURIComponent(input.zone)}`;
}

function rrsetBody(sets: ResourceRecordSet[] | undefined) {
  return (sets ?? []).map((s) => ({ kind: 'dns#resourceRecordSet', name: s.name, type: s.type, ttl: s.ttl, rrdatas: s.rrdatas }));
}

function sameSets(a: ResourceRecordSet[] | undefined, b: ResourceRecordSet[] | undefined): boolean {
  const key = (sets: ResourceRecordSet[] | undefined) =>
    (sets ?? [])
      .map((s) => `${s.name.toLowerCase()}|${s.type}|${s.ttl}|${s.rrdatas.join('\u0000')}`)
      .sort()
      .join('\n');
  return key(a) === key(b);
}

export interface DnsChangeRequest {
  project: string;
  zone: string;
  additions?: ResourceRecordSet[];
  deletions?: ResourceRecordSet[];
}

export function createDnsActivities(deps: ActivityDeps) {

  const activities = {
    /** POST …/managedZones/{zone}/changes — atomic; not idempotent: the workflow guards re-sends. */
    async createDnsChange(input: DnsChangeRequest): Promise<OperationView> {
      const res = await googleFor(deps).dns.request<DnsChange>({
        method: 'POST',
        path: `${zonePath(input)}/changes`,
        body: { kind: 'dns#change', additions: rrsetBody(input.additions), deletions: rrsetBody(input.deletions) },
      });
      return changeView(expectShape<DnsChange>(res, 'POST', DNS_CHANGE_SHAPE));
    },

    /** GET …/changes/{changeId} */
    async getDnsChange(input: { project: string; zone: string; changeId: string }): Promise<OperationView> {
      countPoll(Process.DnsChange);
      const res = await googleFor(deps).dns.request<DnsChange>({ method: 'GET', path: `${zonePath(input)}/changes/${encodeURIComponent(input.changeId)}` });
      return changeView(expectShape<DnsChange>(res, 'GET', DNS_CHANGE_SHAPE));
    },

    /**
     * GET …/changes?sortOrder=descending (paged) — the newest change with exactly these additions and deletions
     * started at or after `notBefore`: the one an earlier try with an unknown outcome made.
     */
    async findDnsChange(input: DnsChangeRequest & { notBefore: string }): Promise<OperationView | undefined> {
      const notBefore = Date.parse(input.notBefore);
      let pageToken: string | undefined;
      for (let page = 0; page < 10; page++) {
        const res = await googleFor(deps).dns.request<{ changes?: DnsChange[]; nextPageToken?: string }>({
          method: 'GET',
          path: `${zonePath(input)}/changes`,
          query: { sortOrder: 'descending', maxResults: 100, pageToken },
        });
        // A malformed list must not read as "not found": that would send the change a second time.
        const body = expectShape<{ changes?: unknown[]; nextPageToken?: string }>(res, 'GET', DNS_CHANGE_LIST_SHAPE);
        for (const change of expectItems<DnsChange>(res, 'GET', body.changes ?? [], DNS_LISTED_CHANGE_SHAPE, 'change')) {
          const started = Date.parse(change.startTime ?? '');
          if (started < notBefore) return undefined;
          if (sameSets(change.additions, input.additions) && sameSets(change.deletions, input.deletions)) return changeView(change);
        }
        pageToken = body.nextPageToken;
        if (!pageToken) break;
      }
      return undefined;
    },
  };
  // The same poll as a quiet poll (see quiet-poll.ts): attempts are polls, unchanged ones cost the workflow nothing.
  return { ...activities, quietGetDnsChange: quietly(activities.getDnsChange) };
}
