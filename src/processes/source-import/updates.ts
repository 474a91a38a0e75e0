/**
 * The source import's updates (workflow code, not a workflow): answers a person gives while the import runs.
 * Validators refuse bad or untimely answers before anything is recorded in history.
 */
import { ApplicationFailure, defineUpdate, setHandler } from '@temporalio/workflow';
import {
  authorMappingProblems,
  importCredentialProblems,
  ImportFailure,
  mappingMatches,
  selectChoice,
  type AuthorMapping,
  type ChoiceAccepted,
  type ChoiceAnswer,
  type CredentialsAccepted,
  type CredentialsAnswer,
  type MappedAuthor,
  type MappingAccepted,
} from './model';
import { activityCause } from '../../common/activity-failures';
import { CredentialFailure, credentialReferenceRefused, IMPORT_CREDENTIALS_SETTING, isCredentialReference } from '../../common/credential';
import { CREDENTIAL_STATES, importApi, PUSHED_STATES, type ImportSession } from './session';

export const importCredentialsUpdate = defineUpdate<CredentialsAccepted, [CredentialsAnswer]>('import-credentials');
export const importChooseUpdate = defineUpdate<ChoiceAccepted, [ChoiceAnswer]>('import-choose');
export const importMapAuthorUpdate = defineUpdate<MappingAccepted, [AuthorMapping]>('import-map-author');

export function messageOf(err: unknown): string {
  const failure = activityCause(err);
  if (failure) return failure.message;
  return err instanceof Error ? err.message : String(err);
}

export function registerImportUpdates(session: ImportSession): void {
  const { target } = session;

  setHandler(
    importCredentialsUpdate,
    async (answer) => {
      try {
        const r = await session.serialized(() => session.call(() => importApi.sendImportCredentials({ ...target, credentials: answer.credentials })));
        session.observe(r);
        session.answers++;
        return { credentials: answer.credentials, status: r.status };
      } catch (err) {
        throw ApplicationFailure.create({
          message: `the credentials were not applied: ${messageOf(err)}`,
          type: activityCause(err)?.type ?? CredentialFailure.Unreadable,
          nonRetryable: true,
        });
      }
    },
    {
      validator: (answer) => {
        const credentials = (answer as Partial<CredentialsAnswer> | undefined)?.credentials;
        if (isCredentialReference(credentials)) throw credentialReferenceRefused('credentials', IMPORT_CREDENTIALS_SETTING);
        const problems = importCredentialProblems(credentials);
        if (problems.length > 0) throw new Error(problems.join('; '));
        const record = session.record;
        if (session.finished || !record || !CREDENTIAL_STATES.includes(record.status)) {
          throw new Error(`the import is not waiting for credentials (status: ${record?.status ?? 'not started'})`);
        }
      },
      description: 'Credentials for the source repository: the name of a credential configured on the workers (LONGHAUL_IMPORT_CREDENTIALS), resolved there.',
    },
  );

  setHandler(
    importChooseUpdate,
    async (answer) => {
      const picked = selectChoice(answer, session.record?.projectChoices ?? []);
      if (!('choice' in picked)) throw ApplicationFailure.nonRetryable(picked.problem, ImportFailure.InvalidChoice);
      try {
        const r = await session.serialized(() => session.call(() => importApi.chooseImportProject({ ...target, choice: picked.choice })));
        session.st.chosenProject = picked.choice;
        session.observe(r);
        session.answers++;
        return { choice: picked.choice, status: r.status };
      } catch (err) {
        throw ApplicationFailure.nonRetryable(`the choice was not applied: ${messageOf(err)}`, activityCause(err)?.type ?? ImportFailure.ChoiceFailed);
      }
    },
    {
      validator: (answer) => {
        const record = session.record;
        if (session.finished || record?.status !== 'detection_found_multiple') {
          throw new Error(`the import is not waiting for a project choice (status: ${record?.status ?? 'not started'})`);
        }
        const picked = selectChoice(answer, record.projectChoices ?? []);
        if ('problem' in picked) throw new Error(picked.problem);
      },
      description: 'Chooses one of project_choices: { index } or fields matching exactly one choice.',
    },
  );

  setHandler(
    importMapAuthorUpdate,
    async (mapping) => {
      const accepted: AuthorMapping = { remote: mapping.remote, name: mapping.name, email: mapping.email };
      session.mappings.push(accepted);
      let changed: MappedAuthor[];
      try {
        changed = await session.applyMappings();
      } catch (err) {
        throw ApplicationFailure.nonRetryable(`the mapping was recorded but not applied yet: ${messageOf(err)}`, activityCause(err)?.type ?? ImportFailure.MappingFailed);
      }
      const matching = [...session.authors.values()].filter((a) => mappingMatches(accepted, a));
      return {
        mapping: accepted,
        mappedAuthors: changed.filter((m) => matching.some((a) => a.id === m.id)),
        waitingForAuthors: matching.length === 0,
      };
    },
    {
      validator: (mapping) => {
        const problems = authorMappingProblems(mapping);
        if (problems.length > 0) throw new Error(problems.join('; '));
        const record = session.record;
        if (session.finished || (record && PUSHED_STATES.includes(record.status))) {
          throw new Error(`too late: the import is ${session.finished ? 'finished' : record?.status}; authors can only be mapped before the push`);
        }
        if (session.authorsComplete() && ![...session.authors.values()].some((a) => mappingMatches(mapping, a))) {
          const known = [...session.authors.values()].map((a) => a.remoteId).join(', ');
          throw new Error(`no author of this import matches ${JSON.stringify(mapping.remote)} (authors: ${known})`);
        }
      },
      description: 'Maps a foreign author (remote id, name or email) to a Git name and email before the push.',
    },
  );
}
