// After a crash: creates that never finished are removed (they were never visible), and
// retrains that were interrupted start again. Run at start and with every sweep, by every
// process: work in flight holds a lease (work-lease.ts), so one process never takes another's
// live work; `graceSeconds` covers rows from before leases.
import { and, isNull } from 'drizzle-orm';
import type { AssetStore } from '../assets/index.ts';
import type { Database } from '../db/index.ts';
import type { Voices } from '../voices/index.ts';
import { discardUnfinished } from './onboarding.ts';
import type { Retraining } from './retraining.ts';
import { identities } from './schema.ts';
import { orphaned } from './work-lease.ts';

/**
 * `ignoreLeases`: the embedded database at start, where this is the only process, so whatever
 * is unfinished is orphaned whatever its lease says.
 */
export async function recoverIdentities(
  deps: { db: Database; store: AssetStore; retraining: Retraining; voices: Voices },
  { graceSeconds, ignoreLeases = false }: { graceSeconds: number; ignoreLeases?: boolean },
): Promise<{ discarded: number; resumed: number }> {
  const unfinished = await deps.db
    .select({ id: identities.id })
    .from(identities)
    .where(and(isNull(identities.onboardedAt), orphaned(graceSeconds, ignoreLeases)));
  for (const { id } of unfinished) await discardUnfinished(deps.db, deps.store, deps.voices, id);
  const resumed = await deps.retraining.resumeInterrupted(graceSeconds, ignoreLeases);
  return { discarded: unfinished.length, resumed };
}
