/**
 * The worker's archive-upload settings (`LONGHAUL_ARCHIVE_PART_MIB`, `LONGHAUL_ARCHIVE_PARTS_IN_FLIGHT`): parsed
 * with the rest of its configuration, checked against every store's part rules, refused with a `ConfigError`
 * naming the setting, and handed to the activities.
 */
import { describe, expect, it } from 'vitest';
import { archiveUploadSettings, ConfigError, loadConfig } from '../../src/config';
import { DEFAULT_PART_BYTES, DEFAULT_PARTS_IN_FLIGHT, partSizeFor } from '../../src/archive/object-store';
import { activityDepsFromConfig } from '../../src/worker';

const MiB = 1024 * 1024;

function refusal(env: NodeJS.ProcessEnv): ConfigError {
  try {
    archiveUploadSettings(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
}

describe('archive upload settings', () => {
  it('are the upload\'s defaults when unset or empty', () => {
    expect(archiveUploadSettings({})).toEqual({});
    expect(archiveUploadSettings({ LONGHAUL_ARCHIVE_PART_MIB: '', LONGHAUL_ARCHIVE_PARTS_IN_FLIGHT: '' })).toEqual({});
    expect(loadConfig({}).archiveUpload).toEqual({});
    expect([DEFAULT_PART_BYTES, DEFAULT_PARTS_IN_FLIGHT]).toEqual([8 * MiB, 4]);
  });

  it('take a part size in whole MiB from S3\'s 5 MiB to Azure\'s 4000 MiB, and parts in flight from 1 to 64', () => {
    expect(archiveUploadSettings({ LONGHAUL_ARCHIVE_PART_MIB: '5', LONGHAUL_ARCHIVE_PARTS_IN_FLIGHT: '1' })).toEqual({ partBytes: 5 * MiB, partsInFlight: 1 });
    expect(archiveUploadSettings({ LONGHAUL_ARCHIVE_PART_MIB: '4000', LONGHAUL_ARCHIVE_PARTS_IN_FLIGHT: '64' })).toEqual({ partBytes: 4000 * MiB, partsInFlight: 64 });
    expect(archiveUploadSettings({ LONGHAUL_ARCHIVE_PART_MIB: '16' })).toEqual({ partBytes: 16 * MiB });
    // Every whole MiB is a multiple of GCS's 256 KiB: the upload uses the size as set (until 10,000 parts
    // would not hold the archive).
    for (const mib of [5, 7, 16, 4000]) expect(partSizeFor(100 * MiB, mib * MiB)).toBe(mib * MiB);
  });

  it.each([
    ['LONGHAUL_ARCHIVE_PART_MIB', 'eight', /LONGHAUL_ARCHIVE_PART_MIB must be an integer from 5 to 4000 \(MiB: S3 takes parts of 5 MiB or more, GCS multiples of 256 KiB, Azure blocks up to 4000 MiB\), got "eight"/],
    ['LONGHAUL_ARCHIVE_PART_MIB', '4', /LONGHAUL_ARCHIVE_PART_MIB must be an integer from 5 to 4000 .*got "4"/],
    ['LONGHAUL_ARCHIVE_PART_MIB', '0', /got "0"/],
    ['LONGHAUL_ARCHIVE_PART_MIB', '-8', /got "-8"/],
    ['LONGHAUL_ARCHIVE_PART_MIB', '5.5', /got "5.5"/],
    ['LONGHAUL_ARCHIVE_PART_MIB', '8MiB', /got "8MiB"/],
    ['LONGHAUL_ARCHIVE_PART_MIB', '4001', /got "4001"/],
    ['LONGHAUL_ARCHIVE_PARTS_IN_FLIGHT', '0', /LONGHAUL_ARCHIVE_PARTS_IN_FLIGHT must be an integer from 1 to 64 \(each holds a part in memory\), got "0"/],
    ['LONGHAUL_ARCHIVE_PARTS_IN_FLIGHT', 'four', /got "four"/],
    ['LONGHAUL_ARCHIVE_PARTS_IN_FLIGHT', '2.5', /got "2.5"/],
    ['LONGHAUL_ARCHIVE_PARTS_IN_FLIGHT', '65', /got "65"/],
  ])('refuse %s=%s with a ConfigError naming the setting and its bounds', (name, value, message) => {
    expect(refusal({ [name]: value }).message).toMatch(message);
    // The worker reads them with the rest of its configuration, so it refuses to start.
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
  });

  it('reach the activities through the worker\'s dependencies', () => {
    const config = loadConfig({ LONGHAUL_ARCHIVE_PART_MIB: '5', LONGHAUL_ARCHIVE_PARTS_IN_FLIGHT: '2', LONGHAUL_RATE_GOVERNOR: 'off' });
    expect(activityDepsFromConfig(config).archiveUpload).toEqual({ partBytes: 5 * MiB, partsInFlight: 2 });
  });
});
