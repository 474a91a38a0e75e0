/** The source import as the rest of longhaul sees it (see src/processes/descriptor.ts). */
import { IMPORT_FAILURES } from './failures';
import { defineProcess } from '../descriptor';
import { Process } from './names';
import { LonghaulOrg, LonghaulProcess, LonghaulProgress, LonghaulState, LonghaulTarget } from '../../common/search-attributes';
import { describeSourceImportStatus, type SourceImportResult, type SourceImportStatus } from './model';
import { sourceImport } from './workflow';
import { IMPORT_SUMMARIES } from './summaries';
import { describeImportResult, registerImportCommands } from './cli';

export const sourceImportProcess = defineProcess({
  name: 'source-import',
  processNames: [Process.SourceImport],
  workflows: [sourceImport],
  activities: () => import('./activities').then((m) => m.createImportActivities),
  summaries: IMPORT_SUMMARIES,
  failures: [IMPORT_FAILURES],
  kinds: {
    [sourceImport.name]: {
      process: Process.SourceImport,
      describeStatus: (s, _heartbeat, workflowId) => describeSourceImportStatus(s as SourceImportStatus, workflowId),
      describeResult: (r) => describeImportResult(r as SourceImportResult),
      describeCleanup: (s) => describeSourceImportStatus(s as SourceImportStatus).line,
    },
  },
  commands: { group: 'start', register: registerImportCommands },
  searchAttributes: [LonghaulProcess, LonghaulOrg, LonghaulTarget, LonghaulState, LonghaulProgress],
});
