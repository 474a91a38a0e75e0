/**
 * Webhook delivery activities (spec 001): list one page of a hook's deliveries, redeliver one delivery,
 * ping a hook. One HTTP call each; the repair workflow does the paging, grouping and pacing.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { githubFor, type ActivityDeps } from '../../activities/context';
import { hookPath, type DeliverySummary, type HookTarget } from './model';
import { parseLinkHeader } from '../../http/api-client';
import { FailureType } from '../../http/retry-policy';
import { answer, expectList, MALFORMED_ANSWER, required } from '../../http/answer';
import { certainlyNotProcessed } from '../../common/activity-failures';

/** `GET …/hooks/{id}/deliveries` items: what `summarizeDelivery` reads. */
export const DELIVERY_SHAPE = answer({ id: required('integer'), guid: required('string'), status: required('string'), delivered_at: required('string') });

export interface DeliveriesPage {
  /** The page's deliveries inside the window (delivered at or after `since`), reduced to ids and outcome. */
  deliveries: DeliverySummary[];
  /** Whether the page reached deliveries older than the window (listing can stop). */
  reachedPastWindow: boolean;
  /** `Link: rel="next"` (carries the `cursor`). */
  next?: string;
}

/** What a redelivery attempt leaves for the next attempt (as heartbeat details). */
interface RedeliveryAttemptNote {
  /** The server refused the request before acting on it (rate limited): sending again cannot duplicate it. */
  notSent?: boolean;
}

export type RedeliveryResult =
  | { accepted: true; sentAt: number }
  /** The server refused: the content-creation limit of this caller is spent ("spammed"). */
  | { accepted: false; spammed: true; sentAt: number; message: string }
  /**
   * The answer was malformed (an HTML page, truncated JSON): the server may or may not have redelivered.
   * Not retried here — a retry would redeliver twice; the workflow looks for the redelivery instead.
   */
  | { accepted: false; unknown: true; sentAt: number; message: string };

interface RawDelivery {
  id: number;
  guid: string;
  status: string;
  status_code: number;
  delivered_at: string;
  redelivery: boolean;
  event: string;
}

export function summarizeDelivery(d: RawDelivery): DeliverySummary {
  return { id: Number(d.id), guid: d.guid, ok: d.status === 'OK', deliveredAt: Date.parse(d.delivered_at) };
}

/** A 422 whose message says the endpoint has been spammed (the content-creation limit). */
export function isSpammed(err: unknown): err is ApplicationFailure {
  return err instanceof ApplicationFailure && err.type === FailureType.ValidationFailed && /spammed/i.test(err.message);
}

export function createHookActivities(deps: ActivityDeps) {
  return {
    /**
     * GET …/hooks/{id}/deliveries?per_page=100 (page 1), or the `Link` URL of a later page. Returns only
     * the deliveries at or after `since` (epoch ms), as ids and outcomes: the page itself stays here.
     */
    async listHookDeliveries(input: { target: HookTarget; hookId: number; since: number; url?: string }): Promise<DeliveriesPage> {
      const res = await githubFor(deps).request<RawDelivery[]>(
        input.url ? { method: 'GET', path: input.url } : { method: 'GET', path: `${hookPath(input.target, input.hookId)}/deliveries`, query: { per_page: 100 } },
      );
      const all = expectList<RawDelivery>(res, 'GET', DELIVERY_SHAPE).map(summarizeDelivery);
      return {
        deliveries: all.filter((d) => d.deliveredAt >= input.since),
        reachedPastWindow: all.some((d) => d.deliveredAt < input.since),
        next: parseLinkHeader(res.headers.link).next,
      };
    },

    /**
     * POST …/deliveries/{id}/attempts (202). Waits out the last milliseconds to `notBefore` (the paced
     * slot) so a timer that fired a little early never squeezes one more request into a window.
     */
    async redeliverHookDelivery(input: { target: HookTarget; hookId: number; deliveryId: number; notBefore?: number }): Promise<RedeliveryResult> {
      const { info } = Context.current();
      // A retry after an attempt that may have sent it (a reset or a timeout after the request went out, a
      // worker killed mid-call) would redeliver twice: the workflow looks for the redelivery instead. Only an
      // attempt the server certainly refused before acting (rate limited; it said so below) is sent again.
      if (info.attempt > 1 && !(info.heartbeatDetails as RedeliveryAttemptNote | undefined)?.notSent) {
        const message = `attempt ${info.attempt}: an earlier attempt may have redelivered it (its outcome is unknown)`;
        return { accepted: false, unknown: true, sentAt: info.scheduledTimestampMs, message };
      }
      const wait = (input.notBefore ?? 0) - deps.clock();
      if (wait > 0) await Context.current().sleep(wait);
      const sentAt = deps.clock();
      try {
        await githubFor(deps).request({ method: 'POST', path: `${hookPath(input.target, input.hookId)}/deliveries/${input.deliveryId}/attempts` });
        return { accepted: true, sentAt };
      } catch (err) {
        // Not a permanent failure of the delivery: the caller backs off and may try again later.
        if (isSpammed(err)) return { accepted: false, spammed: true, sentAt, message: err.message };
        if (err instanceof ApplicationFailure && err.type === MALFORMED_ANSWER) return { accepted: false, unknown: true, sentAt, message: err.message };
        // Recorded with the failure, so the next attempt knows this one sent nothing.
        if (err instanceof ApplicationFailure && certainlyNotProcessed(err)) Context.current().heartbeat({ notSent: true } satisfies RedeliveryAttemptNote);
        throw err;
      }
    },

    /** POST …/hooks/{id}/pings (204): the hook's health check. */
    async pingHook(input: { target: HookTarget; hookId: number }): Promise<{ status: number; pingedAt: string }> {
      const res = await githubFor(deps).request({ method: 'POST', path: `${hookPath(input.target, input.hookId)}/pings` });
      return { status: res.status, pingedAt: new Date(deps.clock()).toISOString() };
    },
  };
}

/** The hook repair's activities, as its workflow proxies them. */
export type HookActivities = ReturnType<typeof createHookActivities>;
