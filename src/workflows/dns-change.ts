/**
 * Cloud DNS change: validate project, zone and record sets before any call → `POST …/changes` once (after a
 * try whose answer was lost, look for the change before sending again) → poll `GET …/changes/{id}` until
 * `status` is `done`. Cloud DNS changes cannot be cancelled: a cancelled workflow leaves the change to finish.
 */
import { dnsChangeProblems, type DnsChangeInput, type DnsChangeResult } from '../common/google-input';
import type { OperationView } from '../common/google-operations';
import { awaitOperation, HttpFailure, endWith, googleApi, googlePoll, googleSend, newStatus, rejectInvalid, sendOnce, trackStatus } from './google-operation';

const CLOCK_SKEW_MARGIN_MS = 5 * 60 * 1000;

export async function dnsChange(input: DnsChangeInput): Promise<DnsChangeResult> {
  rejectInvalid('DNS change', dnsChangeProblems(input));
  const status = newStatus('dns-change', `projects/${input.project}/managedZones/${input.zone}`);
  const show = trackStatus(status);
  const change = { project: input.project, zone: input.zone, additions: input.additions ?? [], deletions: input.deletions ?? [] };
  const notBefore = new Date(Date.now() - CLOCK_SKEW_MARGIN_MS).toISOString();
  try {
    const first = await sendOnce<OperationView>({
      what: `the change to zone ${input.zone}`,
      send: () => googleSend.createDnsChange(change),
      recover: () => googleApi.findDnsChange({ ...change, notBefore }),
      // A lost answer to an applied change makes the re-send conflict with itself.
      conflictTypes: [HttpFailure.AlreadyExists, HttpFailure.Conflict, HttpFailure.NotFound, HttpFailure.FailedPrecondition],
      nonCancellable: true,
    });
    status.phase = 'waiting';
    const done = await awaitOperation(first, {
      what: `change ${first.name} to zone ${input.zone}`,
      bounds: input.poll,
      read: () => googlePoll.getDnsChange({ project: input.project, zone: input.zone, changeId: first.name }),
      onUpdate: show,
      status,
    });
    status.phase = 'done';
    show();
    return { project: input.project, zone: input.zone, changeId: done.name, status: done.state ?? 'done', additions: change.additions, deletions: change.deletions };
  } catch (err) {
    endWith(status, show, err);
  }
}
