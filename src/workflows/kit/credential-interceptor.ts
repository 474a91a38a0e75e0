/**
 * Workflow interceptor (registered with the workflow bundle: `workflowInterceptorModules`): a workflow
 * whose input names a `credential` passes that name, as the `longhaul-credential` header, to every
 * activity, local activity, child workflow and continue-as-new it starts. A child or continued run
 * without the field in its own input inherits the header. An invalid name (or a secret) fails the
 * workflow at once with the typed `InvalidCredential`, before any activity runs.
 */
import { ApplicationFailure, defaultPayloadConverter, type Headers, type Payload } from '@temporalio/common';
import type { WorkflowInterceptors } from '@temporalio/workflow';
import { CREDENTIAL_HEADER, CredentialFailure, credentialNameProblems, credentialOfInput } from '../../common/credential';

export const interceptors = (): WorkflowInterceptors => {
  let credential: Payload | undefined;
  const withCredential = <T extends { headers: Headers }>(input: T): T =>
    credential ? { ...input, headers: { ...input.headers, [CREDENTIAL_HEADER]: credential } } : input;
  return {
    inbound: [
      {
        async execute(input, next) {
          const named = credentialOfInput(input.args);
          const problems = credentialNameProblems(named);
          if (problems.length > 0) throw ApplicationFailure.nonRetryable(problems.join('; '), CredentialFailure.Invalid);
          credential = named !== undefined ? defaultPayloadConverter.toPayload(named) : input.headers[CREDENTIAL_HEADER];
          return next(input);
        },
      },
    ],
    outbound: [
      {
        scheduleActivity: (input, next) => next(withCredential(input)),
        scheduleLocalActivity: (input, next) => next(withCredential(input)),
        startChildWorkflowExecution: (input, next) => next(withCredential(input)),
        continueAsNew: (input, next) => next(withCredential(input)),
      },
    ],
  };
};
