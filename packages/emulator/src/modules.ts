/**
 * The emulated API families: the one place a family is named. Adding one is a folder under
 * `packages/emulator/src/` exporting an `EmulatorModule` (see `module.ts`) and a line here.
 */
import type { AnyModule } from './module';
import { accountsModule, feedsModule, hooksModule, importsModule, migrationsModule, type GithubFamilyOptions } from './github';
import { googleModule, loggingEntriesModule, type GoogleFamilyOptions } from './google';

// List order is mounting order: services appear (`emulator.services`, the CLI's listing) in the order first
// named, and routes sharing a service are matched in registration order.
export const defaultModules = [migrationsModule, importsModule, feedsModule, hooksModule, accountsModule, googleModule, loggingEntriesModule] as const satisfies readonly AnyModule[];

export type DefaultModule = (typeof defaultModules)[number];

/** Emulator options a family reads as a whole rather than one of its modules (the GitHub fixture, the Google ports). */
export type FamilyOptions = GithubFamilyOptions & GoogleFamilyOptions;
