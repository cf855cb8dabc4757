// Training upgrades (docs/api.md#identities-training-upgrades): an identity trained by an older
// version of its pipeline's training (`training.version` below the pipeline's trainingVersion)
// is trained again from its stored photo, in the background, by the sweep. Nothing the account
// sees changes meanwhile: the identity stays `ready`, its sessions use the old training until
// the new one replaces it in one update, nothing is charged, no webhook is sent, the voice is
// untouched. A failure keeps the old training and is retried later, with backoff.
// Limited so that new trainings never wait: TRAINING_UPGRADES_CONCURRENT at once per process
// and across the processes on the database, and none starts while a create or retrain trains.
import { and, count, eq, inArray, isNotNull, isNull, or, type SQL, sql } from 'drizzle-orm';
import type { AssetStore } from '../assets/index.ts';
import type { TrainingUpgradeSettings } from '../config/training-upgrades.ts';
import { secondsFromNow } from '../db/clock.ts';
import type { Database } from '../db/index.ts';
import { keepRenewing, leaseUntil } from '../db/work-lease.ts';
import { log } from '../logging/index.ts';
import type { StoredImage } from '../media/index.ts';
import { inspectImage, type UploadBounds } from '../media/index.ts';
import { timedTraining, trainingUpgrades as upgradesCounted } from '../metrics/index.ts';
import {
  type PipelineRegistry,
  providerAvatarOf,
  releaseTraining,
  type TrainingResult,
  trainedVersionOf,
} from '../pipelines/index.ts';
import { trainingPrefix } from './onboarding.ts';
import type { IdentityRow } from './queries.ts';
import { identities } from './schema.ts';
import { trainingUpgrades } from './training-upgrades-schema.ts';

export interface TrainingUpgradeDeps {
  db: Database;
  store: AssetStore;
  pipelines: PipelineRegistry;
  uploadBounds: UploadBounds;
  settings: TrainingUpgradeSettings;
  /** The lease an upgrade holds while it runs (WORK_LEASE_SECONDS), as creates and retrains do. */
  workLeaseSeconds: number;
}

/** What one sweep did: upgrades started, or none because a create or retrain is training. */
export interface UpgradeSweep {
  started: string[];
  deferred: boolean;
}

/** Serialises the claims of every process on the database (pg_advisory_xact_lock), so the fleet-wide count holds. */
const CLAIM_LOCK = sql`select pg_advisory_xact_lock(hashtextextended('likeness:training-upgrades', 0))`;
/** The longest wait between two attempts at an identity that keeps failing. */
const MAX_RETRY_SECONDS = 24 * 3600;

/** Thrown to roll the final write back when the identity changed since the upgrade read it. */
class Superseded extends Error {}

/** The stored files a training consists of: the photo, its renditions, and its `training.assets`. */
function filesOf(image: StoredImage, training: Record<string, unknown> | null): string[] {
  const assets = training?.assets && typeof training.assets === 'object' ? Object.values(training.assets) : [];
  return [
    image.key,
    ...Object.values(image.variants).map((v) => v.key),
    ...assets.filter((key): key is string => typeof key === 'string'),
  ].filter(Boolean);
}

export class TrainingUpgrades {
  private readonly running = new Map<string, Promise<void>>();

  constructor(private readonly deps: TrainingUpgradeDeps) {}

  /**
   * The sweep (src/server.ts): deletes replaced trainings' files whose time is up, then starts
   * as many upgrades as the limits allow, in the background.
   */
  async sweep(): Promise<UpgradeSweep> {
    await this.retireReplacedFiles();
    const started: string[] = [];
    while (this.running.size < this.deps.settings.concurrent) {
      const claimed = await this.claim();
      if (claimed === 'deferred') return { started, deferred: true };
      if (!claimed) break;
      this.start(claimed);
      started.push(claimed);
    }
    return { started, deferred: false };
  }

  /** Resolves when no upgrade is running in this process (shutdown, tests). */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running.values()]);
  }

  /** Identities whose recorded training version is below their pipeline's; undefined: no pipeline has versions. */
  private stale(): SQL | undefined {
    const recorded = sql`coalesce(case when jsonb_typeof(${identities.training}->'version') = 'number' then (${identities.training}->>'version')::numeric end, 0)`;
    const versioned = this.deps.pipelines.list().filter((p) => p.trainingVersion !== undefined);
    if (versioned.length === 0) return undefined;
    return or(...versioned.map((p) => and(eq(identities.pipelineId, p.id), sql`${recorded} < ${p.trainingVersion}`)));
  }

  /**
   * Takes the lease on the next stale identity, if the limits allow one more upgrade now:
   * 'deferred' while any create or retrain is training (it goes first), undefined when the
   * fleet runs its limit already or nothing is due.
   */
  private async claim(): Promise<string | 'deferred' | undefined> {
    const stale = this.stale();
    if (!stale) return undefined;
    const { concurrent } = this.deps.settings;
    return this.deps.db.transaction(async (tx) => {
      await tx.execute(CLAIM_LOCK);
      const [training] = await tx
        .select({ id: identities.id })
        .from(identities)
        .where(and(inArray(identities.status, ['created', 'training']), sql`${identities.workedUntil} > now()`))
        .limit(1);
      if (training) return 'deferred' as const;
      const [running] = await tx
        .select({ n: count() })
        .from(trainingUpgrades)
        .where(sql`${trainingUpgrades.workedUntil} > now()`);
      if ((running?.n ?? 0) >= concurrent) return undefined;
      const [due] = await tx
        .select({ id: identities.id })
        .from(identities)
        .leftJoin(trainingUpgrades, eq(trainingUpgrades.identityId, identities.id))
        .where(
          and(
            eq(identities.status, 'ready'),
            isNotNull(identities.onboardedAt),
            stale,
            or(isNull(trainingUpgrades.workedUntil), sql`${trainingUpgrades.workedUntil} <= now()`),
            or(isNull(trainingUpgrades.nextAttemptAt), sql`${trainingUpgrades.nextAttemptAt} <= now()`),
          ),
        )
        // Identities never tried before those that keep failing; then the oldest first.
        .orderBy(sql`coalesce(${trainingUpgrades.attempts}, 0)`, identities.createdAt)
        .limit(1);
      if (!due) return undefined;
      const lease = { workedUntil: leaseUntil(this.deps.workLeaseSeconds), updatedAt: new Date() };
      await tx
        .insert(trainingUpgrades)
        .values({ identityId: due.id, ...lease })
        .onConflictDoUpdate({ target: trainingUpgrades.identityId, set: lease });
      return due.id;
    });
  }

  private start(identityId: string): void {
    const { db, workLeaseSeconds } = this.deps;
    const stopRenewing = keepRenewing(
      workLeaseSeconds,
      () =>
        db
          .update(trainingUpgrades)
          .set({ workedUntil: leaseUntil(workLeaseSeconds) })
          .where(eq(trainingUpgrades.identityId, identityId)),
      { identity_id: identityId, work: 'training upgrade' },
    );
    const job = this.upgrade(identityId)
      .catch((error) => log.error({ err: error, identity_id: identityId }, 'a training upgrade failed to finish'))
      // Whatever happened, the lease goes: the next upgrade may start at the next sweep.
      .then(async () => {
        stopRenewing();
        await db
          .update(trainingUpgrades)
          .set({ workedUntil: null })
          .where(eq(trainingUpgrades.identityId, identityId))
          .catch((error) => log.warn({ err: error, identity_id: identityId }, 'releasing an upgrade lease failed'));
        this.running.delete(identityId);
      });
    this.running.set(identityId, job);
  }

  private async upgrade(identityId: string): Promise<void> {
    const { db, store, pipelines, uploadBounds } = this.deps;
    const [row] = await db.select().from(identities).where(eq(identities.id, identityId));
    const pipeline = row && pipelines.get(row.pipelineId);
    const version = pipeline?.trainingVersion;
    // Retrained or deleted since the claim: nothing to do.
    if (!row || !pipeline || row.status !== 'ready' || version === undefined) return;
    if (trainedVersionOf(row.training) >= version) return;
    const from = trainedVersionOf(row.training);
    const prefix = trainingPrefix(identityId);
    const started = performance.now();
    let trained: TrainingResult | undefined;
    try {
      await this.takeFolder(identityId, prefix);
      // The photo as stored at its last training (the raw upload is never kept).
      const stored = await store.get(row.image.key);
      if (!stored) throw new Error(`the stored photo ${row.image.key} is missing`);
      const image = await inspectImage(new Uint8Array(await stored.arrayBuffer()), uploadBounds);
      const named = row.training?.provider_avatar_made === true ? undefined : providerAvatarOf(row.training);
      trained = await timedTraining(pipeline.id, () =>
        pipeline.train({ identityId, image, store, prefix, providerAvatarId: named }),
      );
      const written = await this.writeUpgrade({ identityId, prefix, row, trained, version });
      if (!written) {
        await store.deletePrefix(prefix);
        await this.leaveFolder(identityId, prefix);
        await releaseTraining(pipeline, trained.training);
        upgradesCounted.inc({ outcome: 'superseded' });
        log.info({ identity_id: identityId }, 'training upgrade dropped: the identity changed meanwhile');
        return;
      }
      // An avatar the old training made at a provider goes now (unlike files, it cannot wait for retire_after).
      if (trained.training.provider_avatar_id !== row.training?.provider_avatar_id)
        await releaseTraining(pipeline, row.training);
      upgradesCounted.inc({ outcome: 'upgraded' });
      log.info(
        {
          identity_id: identityId,
          pipeline: pipeline.id,
          from_version: from,
          to_version: version,
          seconds: Math.round(performance.now() - started) / 1000,
        },
        'training upgraded',
      );
    } catch (error) {
      await store.deletePrefix(prefix).catch(() => {});
      await releaseTraining(pipeline, trained?.training);
      const failed = await this.recordFailure(identityId, prefix, error);
      upgradesCounted.inc({ outcome: 'failed' });
      log.warn(
        {
          err: error,
          identity_id: identityId,
          pipeline: pipeline.id,
          from_version: from,
          to_version: version,
          attempts: failed?.attempts,
          next_attempt_at: failed?.nextAttemptAt,
        },
        'training upgrade failed; the old training stays, and it is tried again later',
      );
    }
  }

  /** A failed attempt: counted, and tried again after a wait that doubles with each failure. */
  private async recordFailure(identityId: string, prefix: string, error: unknown) {
    const { db, settings } = this.deps;
    const [failed] = await db
      .update(trainingUpgrades)
      .set({
        prefix: null,
        attempts: sql`${trainingUpgrades.attempts} + 1`,
        lastError: error instanceof Error ? error.message : String(error),
        // The old attempts in SET: the first failure waits retrySeconds, each next one twice as long.
        nextAttemptAt: secondsFromNow(
          sql`least(${settings.retrySeconds}::double precision * power(2, ${trainingUpgrades.attempts}), ${MAX_RETRY_SECONDS})`,
        ),
        updatedAt: new Date(),
      })
      .where(and(eq(trainingUpgrades.identityId, identityId), eq(trainingUpgrades.prefix, prefix)))
      .returning({ attempts: trainingUpgrades.attempts, nextAttemptAt: trainingUpgrades.nextAttemptAt });
    return failed;
  }

  /**
   * The upgraded training replaces the old one, only while the upgrade is still this attempt's
   * and only over the very training it was made from. False when either changed meanwhile.
   */
  private writeUpgrade({
    identityId,
    prefix,
    row,
    trained,
    version,
  }: {
    identityId: string;
    prefix: string;
    row: IdentityRow;
    trained: TrainingResult;
    version: number;
  }): Promise<boolean> {
    const { db, settings } = this.deps;
    const replaced = filesOf(row.image, row.training);
    return db
      .transaction(async (tx) => {
        // Only while the upgrade is still this one's (another process took it over after our lease ran out: theirs)...
        const [ours] = await tx
          .update(trainingUpgrades)
          .set({
            prefix: null,
            attempts: 0,
            lastError: null,
            nextAttemptAt: null,
            upgradedToVersion: version,
            retiredKeys: sql`coalesce(${trainingUpgrades.retiredKeys}, '[]'::jsonb) || ${JSON.stringify(replaced)}::jsonb`,
            retireAfter: secondsFromNow(settings.keepOldSeconds),
            updatedAt: new Date(),
          })
          .where(and(eq(trainingUpgrades.identityId, identityId), eq(trainingUpgrades.prefix, prefix)))
          .returning({ id: trainingUpgrades.identityId });
        if (!ours) return false;
        // ...and only over the very training it was made from: a retrain accepted or finished meanwhile wins.
        const [done] = await tx
          .update(identities)
          .set({ image: trained.image, training: trained.training })
          .where(
            and(
              eq(identities.id, identityId),
              eq(identities.status, 'ready'),
              sql`${identities.image} = ${JSON.stringify(row.image)}::jsonb`,
              row.training
                ? sql`${identities.training} = ${JSON.stringify(row.training)}::jsonb`
                : isNull(identities.training),
            ),
          )
          .returning({ id: identities.id });
        if (!done) throw new Superseded();
        return true;
      })
      .catch((error: unknown) => {
        if (error instanceof Superseded) return false;
        throw error;
      });
  }

  /**
   * Records the folder this attempt writes into, first deleting the one an attempt whose
   * process died left behind (its lease ran out, so nobody writes there any more).
   */
  private async takeFolder(identityId: string, prefix: string): Promise<void> {
    const { db, store } = this.deps;
    const [left] = await db
      .select({ prefix: trainingUpgrades.prefix })
      .from(trainingUpgrades)
      .where(eq(trainingUpgrades.identityId, identityId));
    if (left?.prefix) await store.deletePrefix(left.prefix);
    await db.update(trainingUpgrades).set({ prefix }).where(eq(trainingUpgrades.identityId, identityId));
  }

  private async leaveFolder(identityId: string, prefix: string): Promise<void> {
    await this.deps.db
      .update(trainingUpgrades)
      .set({ prefix: null })
      .where(and(eq(trainingUpgrades.identityId, identityId), eq(trainingUpgrades.prefix, prefix)));
  }

  /** Deletes the files of trainings upgrades replaced, once sessions dispatched before no longer need them. */
  private async retireReplacedFiles(): Promise<void> {
    const { db, store } = this.deps;
    const due = await db
      .select({ identityId: trainingUpgrades.identityId, keys: trainingUpgrades.retiredKeys })
      .from(trainingUpgrades)
      .where(and(isNotNull(trainingUpgrades.retiredKeys), sql`${trainingUpgrades.retireAfter} <= now()`));
    for (const { identityId, keys } of due) {
      for (const key of keys ?? []) await store.delete(key);
      // Unless another upgrade added files meanwhile: those wait for their own time.
      await db
        .update(trainingUpgrades)
        .set({ retiredKeys: null, retireAfter: null })
        .where(
          and(
            eq(trainingUpgrades.identityId, identityId),
            sql`${trainingUpgrades.retiredKeys} = ${JSON.stringify(keys)}::jsonb`,
          ),
        );
    }
  }
}
