/**
 * Paths from input stay in the worker's data directory: the deterministic rule workflows apply
 * (`dataPathProblem`) and the activity's check of the disk, links followed (`pathInDataDir`).
 */
import { mkdir, mkdtemp, readdir, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import { dataPathProblem } from '../../src/common/data-paths';
import { pathInDataDir } from '../../src/activities/data-dir';

async function refusal(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
}

describe('paths from input', () => {
  it('are relative and never climb: absolute, home, drive and .. paths are refused deterministically', () => {
    for (const path of ['/etc', '\\\\server\\share', '~/x', 'C:\\x', '..', '../../x', 'a/../../b', 'a\\..\\b', 'x\0y']) {
      expect(dataPathProblem(path, 'downloadDir'), path).toMatch(/^downloadDir must be a path relative to the worker's data directory \(LONGHAUL_DATA_DIR\)/);
    }
    for (const path of ['archives', 'feeds/x.jsonl', 'a..b', './here']) expect(dataPathProblem(path, 'downloadDir'), path).toBeUndefined();
  });

  it('resolve under the data directory, or are refused typed when a link inside points out, before anything is created', async () => {
    const root = await mkdtemp(join(tmpdir(), 'longhaul-data-dir-'));
    const data = join(root, 'data');
    const outside = join(root, 'outside');
    await mkdir(outside);
    await mkdir(data);
    await symlink(outside, join(data, 'escape'));
    await symlink(join(outside, 'file.jsonl'), join(data, 'dangling.jsonl'));

    expect(await pathInDataDir(data, 'feeds/new/x.jsonl', 'file sink path')).toBe(join(data, 'feeds/new/x.jsonl'));
    for (const [path, why] of [
      ['/tmp/x.jsonl', 'not an absolute path'],
      ['../outside/x.jsonl', '".." is refused'],
      ['escape/x.jsonl', 'leads outside the worker\'s data directory'],
      ['escape/deeper/x.jsonl', 'leads outside the worker\'s data directory'],
      ['dangling.jsonl', 'leads outside the worker\'s data directory'],
    ] as const) {
      const err = await refusal(pathInDataDir(data, path, 'file sink path'));
      expect(err.type, path).toBe('PathOutsideDataDir');
      expect(err.nonRetryable).toBe(true);
      expect(err.message, path).toContain(why);
    }
    // Nothing was created outside (nor the directories the refused paths named).
    expect(await readdir(outside)).toEqual([]);
    expect((await readdir(data)).sort()).toEqual(['dangling.jsonl', 'escape']);
  });
});
