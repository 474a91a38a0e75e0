/** Every workflow the longhaul worker runs. The worker bundles this file. */
export * from '../processes/org-migration/workflow';
export * from './source-import';
export * from './apikey-delete';
export * from './log-bucket';
export * from './dns-change';
export * from './feed-poll';
export * from './hook-repair';
export * from './rate-governor';
