/**
 * `npm run docs:settings`: writes the table of every `LONGHAUL_*` setting (`src/settings.ts`) into
 * docs/operations.md, between its markers; `test/unit/settings.test.ts` fails when the two differ.
 */
import { writeDocsTable } from './docs-table';
import { SETTING_FAMILIES, SETTINGS, type SettingSpec } from '../src/settings';

export const SETTINGS_TABLE_BEGIN = '<!-- settings table: npm run docs:settings writes it from src/settings.ts -->';
export const SETTINGS_TABLE_END = '<!-- end of the settings table -->';

const READERS = { longhaul: 'worker, CLI', emulator: 'emulator', compose: 'compose file', development: 'tests, scripts, benchmarks' } as const;

export function settingsTable(): string {
  const rows = Object.entries(SETTINGS).map(([name, spec]: [string, SettingSpec]) => {
    const file = spec.secret ? ` (or \`${name}_FILE\`)` : '';
    return `| \`${name}\`${file} | ${READERS[spec.readBy ?? 'longhaul']} | ${spec.default ?? '—'} | ${spec.what} |`;
  });
  const families = SETTING_FAMILIES.map((f) => `| ${f.shown} | worker, CLI | — | ${f.what} |`);
  return ['| Setting | Read by | Default | What it sets |', '| --- | --- | --- | --- |', ...rows, ...families].join('\n');
}

/** Writes the table into docs/operations.md (when run, not when a test imports the table). */
function write(): void {
  writeDocsTable('operations.md', SETTINGS_TABLE_BEGIN, SETTINGS_TABLE_END, settingsTable(), 'the table of settings');
}

if (require.main === module) write();
