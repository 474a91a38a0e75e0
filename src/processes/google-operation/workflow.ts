/**
 * The Google operation workflows, one per operation (each its own file, built on `operation.ts`): what the
 * workflow bundle's entry exports of this process (every process's `workflow.ts` exports exactly its workflows).
 */
export { apiKeyDelete } from './apikey-delete';
export { logBucketCreate, logBucketUpdate } from './log-bucket';
export { dnsChange } from './dns-change';
