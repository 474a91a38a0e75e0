/**
 * The one configuration loader (`src/settings.ts`): every `LONGHAUL_*` setting longhaul, the emulator or the compose
 * file reads is in its table and in docs/operations.md's, none is read past it, and a variable of no setting is
 * reported with the one it most likely meant.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isKnownSetting, readVariable, SETTING_FAMILIES, SETTINGS, unknownSettings, describeUnknown } from '../../src/settings';
import { settingsTable, SETTINGS_TABLE_BEGIN, SETTINGS_TABLE_END } from '../../scripts/settings-table';

const repo = join(__dirname, '..', '..');
const tracked = (...paths: string[]) => execFileSync('git', ['ls-files', '--', ...paths], { cwd: repo, encoding: 'utf8' }).trim().split('\n').filter(Boolean);
const NAME = /LONGHAUL_[A-Z0-9_]*[A-Z0-9]_?/g;

/** Each `LONGHAUL_*` name written in these files, with where. A name ending in `_` is a prefix (`LONGHAUL_SINK_${…}`). */
function namesIn(files: string[]): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of files) {
    const text = readFileSync(join(repo, file), 'utf8');
    for (const m of text.matchAll(NAME)) if (!found.has(m[0])) found.set(m[0], `${file}:${text.slice(0, m.index).split('\n').length}`);
  }
  return found;
}

const known = (name: string) =>
  name.endsWith('_') ? Object.keys(SETTINGS).some((k) => k.startsWith(name)) || SETTING_FAMILIES.some((f) => f.pattern.source.startsWith(`^${name}`)) : isKnownSetting(name);

describe('every LONGHAUL_* setting is in the one loader', () => {
  it('longhaul (src/) names no setting the table lacks', () => {
    const unknown = [...namesIn(tracked('src')).entries()].filter(([name]) => !known(name)).map(([name, where]) => `${name} (${where})`);
    expect(unknown, 'add them to SETTINGS in src/settings.ts, then npm run docs:settings').toEqual([]);
  });

  it('the emulator package reads only settings of the table marked as its own; the compose file only settings of the table', () => {
    for (const [name, where] of namesIn(tracked('packages/emulator/src'))) {
      if (!name.endsWith('_')) expect((SETTINGS as Record<string, { readBy?: string }>)[name]?.readBy, `${name} (${where})`).toBe('emulator');
    }
    for (const [name, where] of namesIn(tracked('docker-compose.yml'))) if (!name.endsWith('_')) expect(isKnownSetting(name), `${name} (${where})`).toBe(true);
  });

  it('no file under src/ but the loader reads a LONGHAUL_* variable itself', () => {
    // A read, not an assignment (`process.env.LONGHAUL_DATA_DIR = …` hands a setting to a child process).
    const direct = /(?:process\.env|\benv)\s*(?:\.\s*LONGHAUL_[A-Z0-9_]+(?![A-Z0-9_])|\[\s*['"`]LONGHAUL_[A-Z0-9_]+['"`]\s*\])(?!\s*=[^=])/;
    const readers = tracked('src')
      .filter((file) => file !== 'src/settings.ts' && /\.ts$/.test(file))
      .flatMap((file) =>
        readFileSync(join(repo, file), 'utf8')
          .split('\n')
          .map((line, i) => ({ line, where: `${file}:${i + 1}` }))
          .filter(({ line }) => direct.test(line))
          .map(({ where, line }) => `${where}: ${line.trim()}`),
      );
    expect(readers, "read it with setting('LONGHAUL_…', env) of src/settings.ts").toEqual([]);
  });

  it('docs/operations.md has the table the loader makes', () => {
    const text = readFileSync(join(repo, 'docs', 'operations.md'), 'utf8');
    const begin = text.indexOf(SETTINGS_TABLE_BEGIN);
    const end = text.indexOf(SETTINGS_TABLE_END);
    expect(begin, 'the markers of the settings table').toBeGreaterThan(0);
    expect(text.slice(begin + SETTINGS_TABLE_BEGIN.length, end).trim(), 'run npm run docs:settings').toBe(settingsTable());
    for (const name of Object.keys(SETTINGS)) expect(text).toContain(`\`${name}\``);
  });
});

describe('unknown settings', () => {
  it('reports a LONGHAUL_* variable no setting has, with the one it most likely meant', () => {
    const env = { LONGHAUL_ARCHIVE_T0: 's3://b/p', LONGHAUL_TASK_QUEUE: 'q', LONGHAUL_SINK_HOOKS_SECRET: 'x', LONGHAUL_IMPORT_SVN_MAIN_PASSWORD_FILE: '/f', LONGHAUL_SOMETHING_ELSE: '1', PATH: '/bin' };
    expect(unknownSettings(env)).toEqual([{ name: 'LONGHAUL_ARCHIVE_T0', meant: 'LONGHAUL_ARCHIVE_TO' }, { name: 'LONGHAUL_SOMETHING_ELSE' }]);
    expect(describeUnknown(unknownSettings(env)[0])).toContain('did you mean LONGHAUL_ARCHIVE_TO?');
  });

  it('refuses to read a LONGHAUL_* name it does not know, and reads any other variable', () => {
    expect(() => readVariable('LONGHAUL_NOT_A_SETTING', {})).toThrow(TypeError);
    expect(readVariable('GITHUB_TOKEN', { GITHUB_TOKEN: 't' })).toBe('t');
    expect(readVariable('LONGHAUL_SINK_HOOKS_SECRET_FILE', { LONGHAUL_SINK_HOOKS_SECRET_FILE: '/s' })).toBe('/s');
  });
});
