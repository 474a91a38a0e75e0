/**
 * The GitHub REST family: organization migrations, source imports, activity feeds and webhooks, each a
 * module on the GitHub service (`service.ts`) over the shared fixture.
 */
import { defineModule } from '../module';
import { githubService } from './service';
import { defaultMigrationOptions, registerMigrationRoutes } from './migrations';
import { defaultImportOptions } from './source-import/model';
import { registerImportRoutes } from './source-import/routes';
import { defaultFeedOptions, registerFeedRoutes } from './feeds';
import { defaultHookOptions, registerHookRoutes } from './hooks';
import { defaultAccountOptions, registerAccountRoutes } from './accounts';

export const migrationsModule = defineModule({ name: 'migrations', service: githubService, defaults: defaultMigrationOptions, register: registerMigrationRoutes });

/** Source-import timing, scenarios' data, maintenance windows, retirement. */
export const importsModule = defineModule({ name: 'imports', service: githubService, defaults: defaultImportOptions, register: registerImportRoutes });

/** Activity feeds: event rate, bursts, `X-Poll-Interval`, window size. */
export const feedsModule = defineModule({ name: 'feeds', service: githubService, defaults: defaultFeedOptions, register: registerFeedRoutes });

/** Webhooks: content-creation ("spammed") limits and delivery outcomes. */
export const hooksModule = defineModule({ name: 'hooks', service: githubService, defaults: defaultHookOptions, register: registerHookRoutes });

/** What clients read on their own: the authenticated user, users, organizations, repositories, the rate-limit status. */
export const accountsModule = defineModule({ name: 'accounts', service: githubService, defaults: defaultAccountOptions, register: registerAccountRoutes });

export type { GithubFamilyOptions } from './service';
