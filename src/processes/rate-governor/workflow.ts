/**
 * `rateGovernor`: the entity workflow (id `rate-governor:<credential>`) holding one credential's rate
 * budget for every worker process on the namespace — the shared gate, the window's request budget, the
 * mutation slots and the content-creation allowance (decisions in `model.ts`).
 *
 * Workers reach it with Update-with-Start (`acquire`, before requests) and Signal-with-Start (`report`,
 * a limited answer), so the first worker of a fresh namespace creates it and a worker started later finds
 * the state its peers left. The `limits` query serves the starter's `limits` command; current details
 * show the gate in the UI. It continues as new with its state to bound its history, and ends itself after
 * a long idle spell with nothing left to remember.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  setCurrentDetails,
  setHandler,
} from '@temporalio/workflow';
import {
  acquire,
  acquireRequestProblems,
  RateGovernorInputSchema,
  acquireUpdate,
  limitsQuery,
  reportSignal,
  describeGovernor,
  newGovernorState,
  reportLimit,
  snapshot,
  observe,
  type GovernorConfig,
  type GovernorState,
} from './model';
import { validatedWorkflow } from '../../workflows/kit/validated-input';
import { GOVERNOR_FAILURES } from './failures';
import { mustContinueAsNew } from '../../workflows/kit/run-budget';

/** The messages this workflow handles (defined with the model, which every worker's activities import). */
export { acquireUpdate, limitsQuery, reportSignal } from './model';

export interface RateGovernorInput {
  credential: string;
  config?: Partial<GovernorConfig>;
  /** The state carried over from the previous run (continue-as-new). */
  state?: GovernorState;
}

/** Handled messages per run before continuing as new (each costs a few history events). */
const MESSAGES_PER_RUN = 400;
/** An idle governor with an open gate ends after this (a new one starts at the next request). */
const IDLE_END = '30 minutes';

export const rateGovernor = validatedWorkflow('rateGovernor', { what: 'rate governor input', failures: GOVERNOR_FAILURES, schema: RateGovernorInputSchema }, govern);

async function govern(input: RateGovernorInput): Promise<void> {
  const state = input.state ?? newGovernorState(input.credential, input.config);
  let handled = 0;
  const show = () => setCurrentDetails(describeGovernor(snapshot(state, Date.now())));

  setHandler(
    acquireUpdate,
    (req) => {
      handled++;
      const grant = acquire(state, req, Date.now(), Math.random);
      show();
      return grant;
    },
    {
      validator: (req) => {
        const problems = acquireRequestProblems(req);
        if (problems.length) throw new Error(`invalid acquire request: ${problems.join('; ')}`);
      },
    },
  );
  setHandler(reportSignal, (msg) => {
    handled++;
    if (msg.observation) observe(state, msg.observation, Date.now());
    if (msg.limit) reportLimit(state, msg.limit, Date.now());
    show();
  });
  setHandler(limitsQuery, () => snapshot(state, Date.now()));
  show();

  // One timer per idle period, not one per message: a busy governor writes only its messages to history.
  for (;;) {
    const before = handled;
    const mustRoll = () => mustContinueAsNew({ units: MESSAGES_PER_RUN }, handled);
    if (await condition(mustRoll, IDLE_END)) break;
    const now = Date.now();
    const remembers = state.blockedUntil > now || state.contentBlockedUntil > now || (state.windowResetAt ?? 0) > now;
    if (handled === before && !remembers) return;
  }
  await condition(allHandlersFinished);
  await continueAsNew<typeof rateGovernor>({ credential: input.credential, state });
}
