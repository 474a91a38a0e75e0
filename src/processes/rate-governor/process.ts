/**
 * The rate governor as the rest of longhaul sees it (see src/processes/descriptor.ts). It has no activities of
 * its own: the worker's side is `GovernorLink` (activities/governor-link.ts), the HTTP core's `RequestBudget`.
 */
import { GOVERNOR_FAILURES } from './failures';
import { defineProcess } from '../descriptor';
import { Process } from './names';
import { LonghaulProcess, LonghaulTarget } from '../../common/search-attributes';
import { rateGovernor } from './workflow';
import { registerLimitsCommands } from './cli';

export const rateGovernorProcess = defineProcess({
  name: 'rate-governor',
  processNames: [Process.RateGovernor],
  workflows: [rateGovernor],
  failures: [GOVERNOR_FAILURES],
  commands: { group: 'inspect', register: registerLimitsCommands },
  searchAttributes: [LonghaulProcess, LonghaulTarget],
});
