// An account's recording settings as the finisher, the removal and the routes read them
// (docs/api.md#recording-storage): its row, and its own bucket with the secret opened.
import { eq } from 'drizzle-orm';
import type { Database } from '../db/index.ts';
import { CustomerBucket } from './customer-bucket.ts';
import { recordingStorage } from './schema.ts';
import { open } from './secret-box.ts';

export type StorageRow = typeof recordingStorage.$inferSelect;

/** The account has a bucket, but its secret cannot be opened: the key is unset or not the one it was sealed with. */
export class StorageUnreadable extends Error {}

export async function storageOf(db: Database, accountId: string): Promise<StorageRow | undefined> {
  const [row] = await db.select().from(recordingStorage).where(eq(recordingStorage.accountId, accountId));
  return row;
}

/** The account's own bucket, or undefined when its recordings go to the service's store. */
export function bucketOf(row: StorageRow | undefined, key: Buffer | undefined): CustomerBucket | undefined {
  if (!row?.endpoint || !row.bucket || !row.accessKeyId || !row.secretAccessKey) return undefined;
  if (!key)
    throw new StorageUnreadable(
      "the account's bucket secret cannot be read: RECORDING_STORAGE_KEY is not set on this service",
    );
  let secretAccessKey: string;
  try {
    secretAccessKey = open(key, row.accountId, row.secretAccessKey);
  } catch {
    throw new StorageUnreadable(
      "the account's bucket secret cannot be read with this RECORDING_STORAGE_KEY (it was saved under another): save the storage settings again",
    );
  }
  return new CustomerBucket({
    endpoint: row.endpoint,
    bucket: row.bucket,
    region: row.region,
    prefix: row.prefix,
    accessKeyId: row.accessKeyId,
    secretAccessKey,
  });
}
