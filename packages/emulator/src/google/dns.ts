/**
 * Cloud DNS v1 managed zones and changes (spec 000 C): `POST …/managedZones/{zone}/changes` applies additions
 * and deletions atomically and returns a Change whose `status` moves `pending` → `done` after `changeMs`;
 * `GET …/changes/{changeId}`, `GET …/changes` (newest first with `sortOrder=descending`), `GET …/rrsets`,
 * `GET …/managedZones/{zone}`.
 *
 * Errors follow Cloud DNS v1: the canonical `status` plus the legacy `errors[].reason` (`alreadyExists`,
 * `notFound`, `conditionNotMet`, `invalid`). State advances lazily from the emulator clock.
 */
import type { Router, RouteContext } from '../router';
import { refill, type Durable, type EmulatorContext } from '../module';
import type { FixtureRecordSet, GoogleFixture } from './fixture';
import { googleError, timestamp } from './errors';
import { DNS, ProtoJsonError, readProto, writeProto } from './proto-json';

export interface DnsOptions {
  /** How long a change stays `pending`. @format milliseconds */
  changeMs: number;
}

export const defaultDnsOptions: DnsOptions = { changeMs: 1_500 };

interface EmulatedChange {
  id: string;
  startedAt: number;
  additions: FixtureRecordSet[];
  deletions: FixtureRecordSet[];
}

interface EmulatedZone {
  project: string;
  name: string;
  dnsName: string;
  id: string;
  createdAt: number;
  rrsets: FixtureRecordSet[];
  changes: EmulatedChange[];
}

export function registerDnsRoutes(router: Router, ctx: EmulatorContext, fixture: GoogleFixture, options: DnsOptions) {
  const zones = new Map<string, EmulatedZone>();
  const start = ctx.clock();
  fixture.zones.forEach((z, i) => {
    zones.set(`${z.project}/${z.name}`, {
      ...z,
      id: String(4_000_000_000 + i),
      createdAt: start,
      rrsets: z.rrsets.map((r) => ({ ...r, rrdatas: [...r.rrdatas] })),
      changes: [{ id: '0', startedAt: start, additions: z.rrsets, deletions: [] }],
    });
  });

  const rrsetObject = (r: FixtureRecordSet) => writeProto(DNS.ResourceRecordSet, { kind: 'dns#resourceRecordSet', name: r.name, type: r.type, ttl: r.ttl, rrdatas: r.rrdatas });
  const changeObject = (ch: EmulatedChange, now: number) =>
    writeProto(DNS.Change, {
    kind: 'dns#change',
    id: ch.id,
    startTime: timestamp(ch.startedAt),
    status: now - ch.startedAt >= options.changeMs ? 'done' : 'pending',
    additions: ch.additions.map(rrsetObject),
    deletions: ch.deletions.map(rrsetObject),
    });

  const findZone = (c: RouteContext): EmulatedZone => {
    const { project, zone } = c.params;
    if (!fixture.parents.projects.includes(project)) {
      throw googleError(403, `Forbidden: the caller does not have permission on project ${project}.`, { status: 'PERMISSION_DENIED', legacyReason: 'forbidden' });
    }
    const z = zones.get(`${project}/${zone}`);
    if (!z) throw googleError(404, `The 'parameters.managedZone' resource named '${zone}' does not exist.`, { status: 'NOT_FOUND', legacyReason: 'notFound' });
    return z;
  };

  /** A Change's record sets, already read as proto3 JSON (`readChange`), checked against the zone. */
  const readSets = (value: unknown, field: string, zone: EmulatedZone): FixtureRecordSet[] => {
    if (value === undefined) return [];
    return (value as Record<string, unknown>[]).map((r, i) => {
      const at = `entity.change.${field}[${i}]`;
      const name = typeof r?.name === 'string' ? r.name : '';
      if (!name.endsWith('.') || !(name === zone.dnsName || name.endsWith(`.${zone.dnsName}`))) {
        throw googleError(400, `Invalid value for '${at}.name': '${name}' is not within the zone's DNS name '${zone.dnsName}'.`, { status: 'INVALID_ARGUMENT', legacyReason: 'invalid' });
      }
      const rrdatas = (r.rrdatas as string[] | undefined) ?? [];
      if (typeof r.type !== 'string' || r.type === '' || !Number.isInteger(r.ttl) || rrdatas.length === 0) {
        throw googleError(400, `Invalid value for '${at}': type, ttl and rrdatas are required.`, { status: 'INVALID_ARGUMENT', legacyReason: 'invalid' });
      }
      return { name: name.toLowerCase(), type: r.type, ttl: r.ttl as number, rrdatas };
    });
  };

  const same = (a: FixtureRecordSet, b: FixtureRecordSet) => a.name === b.name && a.type === b.type;
  const identical = (a: FixtureRecordSet, b: FixtureRecordSet) =>
    same(a, b) && a.ttl === b.ttl && a.rrdatas.length === b.rrdatas.length && a.rrdatas.every((d, i) => d === b.rrdatas[i]);

  const zonePath = '/dns/v1/projects/:project/managedZones/:zone';

  router.get(zonePath, (c) => {
    const z = findZone(c);
    return { status: 200, body: writeProto(DNS.ManagedZone, { kind: 'dns#managedZone', name: z.name, dnsName: z.dnsName, id: z.id, creationTime: timestamp(z.createdAt), visibility: 'public' }) };
  });

  router.get(`${zonePath}/rrsets`, (c) => ({ status: 200, body: writeProto(DNS.ResourceRecordSetsListResponse, { kind: 'dns#resourceRecordSetsListResponse', rrsets: findZone(c).rrsets.map(rrsetObject) }) }));

  router.post(`${zonePath}/changes`, (c) => {
    const z = findZone(c);
    let body: Record<string, unknown>;
    try {
      body = readProto(DNS.Change, c.body);
    } catch (err) {
      if (err instanceof ProtoJsonError) throw googleError(400, err.message.replace(/ at '/, " at 'entity.change."), { status: 'INVALID_ARGUMENT', legacyReason: 'invalid' });
      throw err;
    }
    const additions = readSets(body.additions, 'additions', z);
    const deletions = readSets(body.deletions, 'deletions', z);
    if (additions.length + deletions.length === 0) {
      throw googleError(400, 'The change must contain at least one addition or deletion.', { status: 'INVALID_ARGUMENT', legacyReason: 'required' });
    }
    // Atomic: check everything, then apply everything.
    deletions.forEach((d, i) => {
      const current = z.rrsets.find((r) => same(r, d));
      if (!current) throw googleError(404, `The 'entity.change.deletions[${i}]' resource named '${d.name} (${d.type})' does not exist.`, { status: 'NOT_FOUND', legacyReason: 'notFound' });
      if (!identical(current, d)) {
        throw googleError(412, `Precondition not met for 'entity.change.deletions[${i}]': the record set '${d.name} (${d.type})' does not match its current data.`, { status: 'FAILED_PRECONDITION', legacyReason: 'conditionNotMet' });
      }
    });
    const remaining = z.rrsets.filter((r) => !deletions.some((d) => same(r, d)));
    additions.forEach((a, i) => {
      if (remaining.some((r) => same(r, a)) || additions.slice(0, i).some((b) => same(a, b))) {
        throw googleError(409, `The resource 'entity.change.additions[${i}]' named '${a.name} (${a.type})' already exists.`, { status: 'ALREADY_EXISTS', legacyReason: 'alreadyExists' });
      }
    });
    z.rrsets = [...remaining, ...additions];
    const change: EmulatedChange = { id: String(z.changes.length), startedAt: c.now, additions, deletions };
    z.changes.push(change);
    return { status: 200, body: changeObject(change, c.now) };
  });

  router.get(`${zonePath}/changes/:changeId`, (c) => {
    const z = findZone(c);
    const change = z.changes.find((ch) => ch.id === c.params.changeId);
    if (!change) throw googleError(404, `The 'parameters.changeId' resource named '${c.params.changeId}' does not exist.`, { status: 'NOT_FOUND', legacyReason: 'notFound' });
    return { status: 200, body: changeObject(change, c.now) };
  });

  router.get(`${zonePath}/changes`, (c) => {
    const z = findZone(c);
    const ordered = c.query.get('sortOrder') === 'descending' ? [...z.changes].reverse() : z.changes;
    const maxResults = Math.min(1000, Math.max(1, Number(c.query.get('maxResults') ?? 100) || 100));
    const offset = Number(c.query.get('pageToken') ?? 0) || 0;
    const page = ordered.slice(offset, offset + maxResults);
    const next = offset + maxResults < ordered.length ? String(offset + maxResults) : undefined;
    return { status: 200, body: writeProto(DNS.ChangesListResponse, { kind: 'dns#changesListResponse', changes: page.map((ch) => changeObject(ch, c.now)), nextPageToken: next }) };
  });

  return {
    options,
    zones,
    /** The zone's record sets now. */
    rrsets(project: string, zone: string): FixtureRecordSet[] {
      return zones.get(`${project}/${zone}`)?.rrsets ?? [];
    },
    durable: { snapshot: () => zones, restore: (saved) => refill(zones, saved) } satisfies Durable<typeof zones>,
  };
}

export type DnsState = ReturnType<typeof registerDnsRoutes>;
