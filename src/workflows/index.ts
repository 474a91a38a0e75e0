/** Every workflow the longhaul worker runs. The worker bundles this file. */
export * from './org-migration';
export * from './source-import';
