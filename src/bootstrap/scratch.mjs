// The suites' temporary files go on a memory filesystem when the machine has one (/dev/shm):
// each test service copies a migrated PGlite folder (1,117 files, 40 MB) into a data folder of
// its own, and a run starts hundreds. On ext4 a copy costs 0.5–0.6 s of kernel CPU, on tmpfs
// 0.06 s; the agents' data folders, recordings and WAV files gain the same way. The bootstrap
// points TMPDIR at a folder of its own there for the suites (Postgres and S3 stay where they
// were) and removes it after the run. LIKENESS_TEST_TMPDIR=keep leaves TMPDIR as it is.
import fs from 'node:fs';
import path from 'node:path';
import { processAlive } from './processes.mjs';

const MEMORY_FS = '/dev/shm';
const PREFIX = 'likeness-test-';
/** tmpfs's magic number (statfs(2)). */
const TMPFS_MAGIC = 0x01021994;
/** Below this much free room the run keeps to the disk: a run's folder peaked at 0.13 GB, but it is memory the suites need too. */
const MIN_FREE_BYTES = 8 * 1024 ** 3;

/**
 * A fresh folder on the memory filesystem for the suites' TMPDIR, or null when there is none
 * with room (or LIKENESS_TEST_TMPDIR=keep). Folders of runs that were killed outright go first.
 */
export function memoryScratchFolder(env = process.env) {
  if (env.LIKENESS_TEST_TMPDIR === 'keep') return null;
  try {
    const stats = fs.statfsSync(MEMORY_FS);
    if (stats.type !== TMPFS_MAGIC || stats.bavail * stats.bsize < MIN_FREE_BYTES) return null;
    for (const name of fs.readdirSync(MEMORY_FS)) {
      const owner = name.startsWith(PREFIX) ? Number(name.slice(PREFIX.length).split('-')[0]) : NaN;
      if (Number.isInteger(owner) && owner !== process.pid && !processAlive(owner)) {
        fs.rmSync(path.join(MEMORY_FS, name), { recursive: true, force: true });
      }
    }
    const folder = fs.mkdtempSync(path.join(MEMORY_FS, `${PREFIX}${process.pid}-`));
    // Services the suites start as other users (none today) could still reach it.
    fs.chmodSync(folder, 0o1777);
    return folder;
  } catch {
    return null;
  }
}

/** Removes the folder memoryScratchFolder made (and whatever the suites left in it). */
export function removeScratchFolder(folder) {
  if (folder) fs.rmSync(folder, { recursive: true, force: true });
}
