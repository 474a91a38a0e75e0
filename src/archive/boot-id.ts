/**
 * The kernel's boot id, recorded with a download's checkpoints (issue 40). A process that was killed (SIGKILL,
 * OOM, a crash) leaves every byte it wrote in the kernel's page cache: a later process of the same boot finds
 * them all in the file, whether they reached the disk or not. Only a restart of the machine (a power loss, a
 * kernel crash) can lose a tail that was written but not synced, or leave one that was never written (blocks
 * allocated and not filled). So the same boot id trusts the file's length; another one, or none (a platform
 * without `/proc/sys/kernel/random/boot_id`), trusts only what was synced.
 */
import { readFile } from 'node:fs/promises';

/** Linux's random id for the running boot (a UUID), changed by every restart of the machine. */
export const BOOT_ID_PATH = '/proc/sys/kernel/random/boot_id';

let cached: Promise<string | undefined> | undefined;

/** The running boot's id, or undefined where the platform has none (then every resume is treated as after a restart). */
export function currentBootId(): Promise<string | undefined> {
  cached ??= readFile(BOOT_ID_PATH, 'utf8').then(
    (text) => text.trim() || undefined,
    () => undefined,
  );
  return cached;
}

/** Whether bytes written under `recorded` are all still in files now: the same boot, known on both sides. */
export function sameBoot(recorded: string | undefined, current: string | undefined): boolean {
  return recorded !== undefined && current !== undefined && recorded === current;
}
