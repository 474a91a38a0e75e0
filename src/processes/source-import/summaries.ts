/**
 * The one-line summary of each of this process's activities in the Temporal UI (`summarized` of the workflow kit):
 * made from the activity's input only, so deterministic. A new activity without one fails the typecheck.
 */
import type { Summaries } from '../../workflows/kit/activity-summaries';
import type { ImportActivities } from './activities';

const repo = (t: { owner: string; repo: string }) => `${t.owner}/${t.repo}`;

export const IMPORT_SUMMARIES: Summaries<ImportActivities> = {
  startImport: (i) => `Start import into ${repo(i)}`,
  getImport: (i) => `Poll import into ${repo(i)}`,
  quietGetImport: (i) => `Poll import into ${repo(i)} until it changes`,
  sendImportCredentials: (i) => `Send source credentials for ${repo(i)}`,
  chooseImportProject: (i) => `Choose the source project for ${repo(i)}`,
  restartImport: (i) => `Restart import into ${repo(i)}`,
  cancelImport: (i) => `Cancel import into ${repo(i)}`,
  listImportAuthors: (i) => `List commit authors of ${repo(i)}`,
  mapImportAuthor: (i) => `Map author ${i.authorId} of ${repo(i)}`,
  listImportLargeFiles: (i) => `List large files of ${repo(i)}`,
  setImportLfs: (i) => `Set LFS ${i.useLfs === 'opt_in' ? 'on' : 'off'} for ${repo(i)}`,
};
