// One installer at a time per folder: two bootstraps on one machine (npm start beside npm
// test) would otherwise pip-install over each other. The lock is a directory holding the
// owner's pid; a lock whose owner died is taken over.
import fs from 'node:fs';
import path from 'node:path';
import { log } from './log.mjs';
import { interruption, processAlive } from './processes.mjs';

/** Runs `fn` holding the lock `lockDir`; `what` names the install in the waiting message. */
export async function withInstallLock(lockDir, what, fn) {
  const ownerFile = path.join(lockDir, 'pid');
  fs.mkdirSync(path.dirname(lockDir), { recursive: true });
  let announced = false;
  for (;;) {
    try {
      fs.mkdirSync(lockDir);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
    let owner = null;
    try {
      owner = Number(fs.readFileSync(ownerFile, 'utf8')) || null;
    } catch {
      // no pid yet
    }
    let age = 0;
    try {
      age = Date.now() - fs.statSync(lockDir).mtimeMs;
    } catch {
      continue; // just released
    }
    // No pid yet is normal for a moment after the owner's mkdir; for long, it died there.
    if (owner ? !processAlive(owner) : age > 10_000) {
      fs.rmSync(lockDir, { recursive: true, force: true });
      continue;
    }
    if (interruption()) throw new Error(`interrupted by ${interruption()}`);
    if (!announced) log(`waiting for another bootstrap (pid ${owner ?? '?'}) that is installing ${what}…`);
    announced = true;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  try {
    fs.writeFileSync(ownerFile, String(process.pid));
    return await fn();
  } finally {
    fs.rmSync(lockDir, { recursive: true, force: true });
  }
}
