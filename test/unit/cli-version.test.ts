/**
 * The release a CLI runs and the exit codes it documents, as a user asks for them: `longhaul --version` prints
 * package.json's version, and `--help` lists every exit code of `ExitCode`, 6 (namespace not ready) included.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/common/exit-codes';
import { releaseVersion } from '../../src/release';

const run = promisify(execFile);
const repo = join(__dirname, '..', '..');
const longhaul = (...args: string[]) => run(process.execPath, [join(repo, 'bin', 'longhaul.js'), ...args], { cwd: repo });

describe('the release', () => {
  it('is the version in package.json, and `longhaul --version` prints it alone on stdout', async () => {
    const { version } = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string };
    expect(releaseVersion()).toBe(version);
    const { stdout, stderr } = await longhaul('--version');
    expect(stdout).toBe(`${version}\n`);
    expect(stderr).toBe('');
  });

  it('`longhaul --help` documents every exit code, and `longhaul doctor` is listed', async () => {
    const { stdout } = await longhaul('--help');
    for (const code of Object.values(ExitCode)) expect(stdout).toMatch(new RegExp(`^  ${code}  `, 'm'));
    expect(stdout).toMatch(/^ {2}6 {2}the namespace lacks what this release needs/m);
    expect(stdout).toMatch(/^ {2}doctor /m);
  });
});
