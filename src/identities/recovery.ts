// After a crash: creates that never finished are removed (they were never visible), and
// retrains that were interrupted start again. `graceSeconds` keeps one process of a
// scaled-out deployment from sweeping another's work in flight.
import { and, isNull, lt } from 'drizzle-orm';
import type { AssetStore } from '../assets/index.ts';
import type { Database } from '../db/index.ts';
import { discardUnfinished } from './onboarding.ts';
import type { Voices } from '../voices/index.ts';
import type { Retraining } from './retraining.ts';
import { identities } from './schema.ts';

export async function recoverIdentities(
  deps: { db: Database; store: AssetStore; retraining: Retraining; voices: Voices },
  graceSeconds: number,
): Promise<{ discarded: number; resumed: number }> {
  const cutoff = new Date(Date.now() - graceSeconds * 1000);
  const unfinished = await deps.db
    .select({ id: identities.id })
    .from(identities)
    .where(and(isNull(identities.onboardedAt), lt(identities.createdAt, cutoff)));
  for (const { id } of unfinished) await discardUnfinished(deps.db, deps.store, deps.voices, id);
  const resumed = await deps.retraining.resumeInterrupted(graceSeconds);
  return { discarded: unfinished.length, resumed };
}
