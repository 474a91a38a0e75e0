import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { previousReleaseCommit, recordedReleases } from '../helpers/previous-release';

const root = join(__dirname, '..', '..');

describe('the previous release the upgrade test upgrades from', () => {
  it('reads the release commits under their version headings, newest first, and none from Unreleased', () => {
    const changelog = [
      '## [Unreleased]',
      'Release commit: `' + 'a'.repeat(40) + '`.',
      '## [0.3.0] - 2026-11-25',
      '',
      'Release commit: `' + 'b'.repeat(40) + '`.',
      '### Upgrading',
      '## [0.2.0] - 2026-11-25',
      'Release commit: `' + 'c'.repeat(40) + '`.',
    ].join('\n');
    expect(recordedReleases(changelog)).toEqual([
      { version: '0.3.0', sha: 'b'.repeat(40) },
      { version: '0.2.0', sha: 'c'.repeat(40) },
    ]);
  });

  it("is a commit this repository's CHANGELOG records, shipped with a version other than HEAD's", () => {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
    const head = (JSON.parse(git('show', 'HEAD:package.json')) as { version: string }).version;
    const { sha, version } = previousReleaseCommit();
    expect(version).not.toBe(head);
    expect((JSON.parse(git('show', `${sha}:package.json`)) as { version: string }).version).toBe(version);
    expect(recordedReleases(readFileSync(join(root, 'CHANGELOG.md'), 'utf8'))).toContainEqual({ version, sha });
  });
});
