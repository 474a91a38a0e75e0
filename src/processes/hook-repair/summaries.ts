/**
 * The one-line summary of each of this process's activities in the Temporal UI (`summarized` of the workflow kit):
 * made from the activity's input only, so deterministic. A new activity without one fails the typecheck.
 */
import type { Summaries } from '../../workflows/kit/activity-summaries';
import type { HookActivities } from './activities';
import type { HookTarget } from './model';

const hookOf = (t: HookTarget, hookId: number) => `hook ${hookId} of ${'org' in t ? t.org : `${t.owner}/${t.repo}`}`;

export const HOOK_SUMMARIES: Summaries<HookActivities> = {
  listHookDeliveries: (i) => `List deliveries of ${hookOf(i.target, i.hookId)}`,
  redeliverHookDelivery: (i) => `Redeliver ${i.deliveryId} of ${hookOf(i.target, i.hookId)}`,
  pingHook: (i) => `Ping ${hookOf(i.target, i.hookId)}`,
};
