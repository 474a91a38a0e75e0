/** Every workflow the longhaul worker runs. The worker bundles this file. */
export * from '../processes/org-migration/workflow';
export * from '../processes/source-import/workflow';
export * from './apikey-delete';
export * from './log-bucket';
export * from './dns-change';
export * from './feed-poll';
export * from './hook-repair';
export * from './rate-governor';
