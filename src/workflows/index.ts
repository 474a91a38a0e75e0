/** Every workflow the longhaul worker runs. The worker bundles this file. */
export * from '../processes/org-migration/workflow';
export * from '../processes/source-import/workflow';
export * from '../processes/google-operation/apikey-delete';
export * from '../processes/google-operation/log-bucket';
export * from '../processes/google-operation/dns-change';
export * from '../processes/feed-poll/workflow';
export * from '../processes/hook-repair/workflow';
export * from '../processes/rate-governor/workflow';
export * from '../processes/org-backup/workflow';
