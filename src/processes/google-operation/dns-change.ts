/**
 * Cloud DNS change: validate project, zone and record sets before any call → `POST …/changes` once (after a
 * try whose answer was lost, look for the change before sending again) → poll `GET …/changes/{id}` until
 * `status` is `done`. Cloud DNS changes cannot be cancelled: a cancelled workflow leaves the change to finish.
 */
import { DnsChangeInputSchema, type DnsChangeInput, type DnsChangeResult } from './input';
import type { OperationView } from './model';
import { awaitOperation, endWith, googleApi, googlePoll, googleQuietPoll, googleSend, FailureType, sendOperation, startRun } from './operation';
import { CLOCK_SKEW_MS } from '../../common/clock-skew';
import { Process } from './names';
import { validatedWorkflow } from '../../workflows/kit/validated-input';
import { GOOGLE_OPERATION_FAILURES } from './failures';


export const dnsChange = validatedWorkflow('dnsChange', { what: 'DNS change', failures: GOOGLE_OPERATION_FAILURES, schema: DnsChangeInputSchema }, changeDns);

async function changeDns(input: DnsChangeInput): Promise<DnsChangeResult> {
  const run = startRun(Process.DnsChange, `projects/${input.project}/managedZones/${input.zone}`);
  const change = { project: input.project, zone: input.zone, additions: input.additions ?? [], deletions: input.deletions ?? [] };
  const notBefore = new Date(Date.now() - CLOCK_SKEW_MS.google).toISOString();
  try {
    const first = await sendOperation<OperationView>({
      what: `the change to zone ${input.zone}`,
      send: () => googleSend.createDnsChange(change),
      recover: () => googleApi.findDnsChange({ ...change, notBefore }),
      // A lost answer to an applied change makes the re-send conflict with itself.
      conflictTypes: [FailureType.AlreadyExists, FailureType.Conflict, FailureType.NotFound, FailureType.FailedPrecondition],
      outage: input.outage,
      graceMs: input.sendOnceGraceMs ?? input.recoveryGraceMs,
    });
    run.status.phase = 'waiting';
    const done = await awaitOperation(run, first, {
      what: `change ${first.name} to zone ${input.zone}`,
      bounds: input.poll,
      outage: input.outage,
      read: () => googlePoll.getDnsChange({ project: input.project, zone: input.zone, changeId: first.name }),
      quiet: (request) => googleQuietPoll.quietGetDnsChange({ project: input.project, zone: input.zone, changeId: first.name, ...request }),
    });
    run.status.phase = 'done';
    run.observe();
    return { project: input.project, zone: input.zone, changeId: done.name, status: done.state ?? 'done', additions: change.additions, deletions: change.deletions };
  } catch (err) {
    endWith(run, err);
  }
}
