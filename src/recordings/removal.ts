// Removing a recording's file (DELETE /v1/sessions/{id}/recording, and the retention): the file
// (in the service's store, or in the account's own bucket for DELETE) and any chunks leave, the row stays with `deleted_at` (docs/api.md#recordings: the
// session and the ledger keep that it existed).
import { and, eq, isNull } from 'drizzle-orm';
import type { AssetStore } from '../assets/index.ts';
import type { Database } from '../db/index.ts';
import type { CustomerBucket, EndpointRules } from './customer-bucket.ts';
import { chunksPrefix } from './object-keys.ts';
import { recordings } from './schema.ts';

type RecordingRow = typeof recordings.$inferSelect;

/**
 * Removes the recording's bytes, then marks it deleted; true when this call marked it. The bytes
 * go first: a failure leaves the row as it was, to be tried again, never a row that says
 * deleted over a file that is still there.
 */
export async function removeRecording(
  db: Database,
  store: AssetStore,
  row: RecordingRow,
  /** Store `customer`: the bucket it went to (only DELETE passes it; the retention leaves the customer's files alone). */
  customer?: { bucket: CustomerBucket; rules: EndpointRules },
): Promise<boolean> {
  if (row.store === 'service' && row.objectKey) await store.delete(row.objectKey);
  if (row.store === 'customer' && row.objectKey && row.deletedAt === null) {
    if (!customer) throw new Error("a recording in the account's bucket is removed with that bucket");
    await customer.bucket.delete(row.objectKey, customer.rules);
  }
  await store.deletePrefix(chunksPrefix(row.sessionId));
  const [marked] = await db
    .update(recordings)
    .set({ deletedAt: new Date() })
    .where(and(eq(recordings.sessionId, row.sessionId), isNull(recordings.deletedAt)))
    .returning({ sessionId: recordings.sessionId });
  return Boolean(marked);
}
