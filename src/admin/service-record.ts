// How the CLI finds a running service: it writes DATA_DIR/service.json at start, and the
// admin token lives in DATA_DIR/admin-token (0600) unless ADMIN_TOKEN is set.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../config.ts';
import { randomBase62 } from '../db/ids.ts';

export interface ServiceRecord {
  pid: number;
  url: string;
}

const recordPath = (config: Config) => join(config.dataDir, 'service.json');

export async function adminTokenFor(config: Config): Promise<string> {
  if (config.adminToken) return config.adminToken;
  const path = join(config.dataDir, 'admin-token');
  const existing = await readFile(path, 'utf8').catch(() => undefined);
  if (existing?.trim()) return existing.trim();
  await mkdir(config.dataDir, { recursive: true });
  const token = randomBase62(43);
  await writeFile(path, token, { mode: 0o600 });
  return token;
}

export async function writeServiceRecord(config: Config, record: ServiceRecord): Promise<void> {
  await mkdir(config.dataDir, { recursive: true });
  await writeFile(recordPath(config), JSON.stringify(record));
}

export async function removeServiceRecord(config: Config): Promise<void> {
  await rm(recordPath(config), { force: true });
}

/** True while a process with this pid exists. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The service running on this DATA_DIR, if its process is still alive. */
export async function runningService(config: Config): Promise<ServiceRecord | undefined> {
  const raw = await readFile(recordPath(config), 'utf8').catch(() => undefined);
  if (!raw) return undefined;
  try {
    const record = JSON.parse(raw) as ServiceRecord;
    return processAlive(record.pid) && record.pid !== process.pid ? record : undefined;
  } catch {
    return undefined;
  }
}
