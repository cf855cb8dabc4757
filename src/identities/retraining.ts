// Retraining (docs/api.md#identities-update): new reference media are accepted with 202 and trained in the
// background while the status reads `training`. The identity keeps serving its previous
// media until the new ones are ready; a failed retrain leaves them in place and says why
// in `detail`. One retrain per identity at a time: a second one answers 409. New audio is
// cloned into a new voice here; the old clone is deleted at the provider once replaced.
import { and, eq, isNotNull } from 'drizzle-orm';
import type { AssetStore } from '../assets/index.ts';
import type { Language } from '../contract/languages.ts';
import type { Database } from '../db/index.ts';
import { isOwned } from '../db/owned.ts';
import { ApiError } from '../http/errors.ts';
import { log } from '../logging/index.ts';
import type { StoredImage } from '../media/index.ts';
import {
  type InspectedAudio,
  type InspectedImage,
  inspectAudio,
  inspectImage,
  MediaError,
  type UploadBounds,
} from '../media/index.ts';
import { timedTraining } from '../metrics/index.ts';
import { type PipelineRegistry, providerAvatarOf, releaseTraining, type TrainingResult } from '../pipelines/index.ts';
import type { IdentityVoice } from '../voices/index.ts';
import { sampleProfile, VoiceProviderError, type Voices } from '../voices/index.ts';
import { writeEvent } from '../webhooks/index.ts';
import { type AttachmentChange, replaceAttachments } from './attachments.ts';
import { storeVoice, trainingPrefix, type UploadedAudio } from './onboarding.ts';
import type { IdentityRow } from './queries.ts';
import { identities, type PendingRetrain } from './schema.ts';
import { claimOrphanedRetrain, holdLease, leaseUntil, orphaned } from './work-lease.ts';

export interface RetrainRequest {
  accountId: string;
  identityId: string;
  prompt: string;
  name?: string;
  language?: Language;
  /** Applies at once, like the text fields. */
  recordSessions?: boolean;
  /** Applies at once too; null clears it. */
  outcomeSchema?: Record<string, unknown> | null;
  image?: { bytes: Uint8Array; inspected: InspectedImage };
  audio?: UploadedAudio;
  /** A preset chosen alongside an image upload: applies at once, like the text fields (null: the default voice). */
  voice?: IdentityVoice | null;
  /** Tools and documents sent alongside: replaced at once, with the text fields. */
  attachments?: AttachmentChange;
}

export interface RetrainingDeps {
  db: Database;
  store: AssetStore;
  pipelines: PipelineRegistry;
  uploadBounds: UploadBounds;
  voices: Voices;
  /** The lease a retrain holds on its identity while it runs (WORK_LEASE_SECONDS). */
  workLeaseSeconds: number;
}

/** What a new photo's training replaces: the photo, its renditions, and the files its training stored (`training.assets`). */
function keysOf(image: StoredImage, training: Record<string, unknown> | null): string[] {
  const assets = training?.assets && typeof training.assets === 'object' ? Object.values(training.assets) : [];
  return [
    image.key,
    ...Object.values(image.variants).map((v) => v.key),
    ...assets.filter((key) => typeof key === 'string'),
  ];
}

export class Retraining {
  private readonly running = new Map<string, Promise<void>>();

  constructor(private readonly deps: RetrainingDeps) {}

  /** Store the uploads, mark the identity `training`, and start the work. Answers 409 while one runs. */
  async accept(request: RetrainRequest): Promise<IdentityRow> {
    const { db, store } = this.deps;
    const prefix = trainingPrefix(request.identityId);
    const pending: PendingRetrain = { requestedAt: new Date().toISOString() };
    if (request.image) {
      const ext = request.image.inspected.kind.split('/')[1]!.replace('jpeg', 'jpg');
      const key = `${prefix}upload.${ext}`;
      await store.put(key, request.image.bytes, request.image.inspected.kind);
      pending.image = { key, contentType: request.image.inspected.kind };
    }
    if (request.audio) {
      pending.audio = await storeVoice(store, prefix, request.audio);
      // The profile was measured while validating; the provider's clone is added by the retrain.
      pending.voice = { presetId: null, multilingual: true, elevenlabsVoiceId: null, profile: request.audio.profile };
    }

    // The status guard makes accepting atomic: of two concurrent retrains only one flips ready → training.
    const now = new Date();
    const row = await db
      .transaction(async (tx) => {
        const [accepted] = await tx
          .update(identities)
          .set({
            status: 'training',
            detail: null,
            prompt: request.prompt,
            ...(request.name !== undefined && { name: request.name }),
            ...(request.language !== undefined && { language: request.language }),
            ...(request.recordSessions !== undefined && { recordSessions: request.recordSessions }),
            ...(request.outcomeSchema !== undefined && { outcomeSchema: request.outcomeSchema }),
            ...(request.voice !== undefined && { voice: request.voice, audio: null }),
            pendingRetrain: pending,
            updatedAt: now,
            workedUntil: leaseUntil(this.deps.workLeaseSeconds),
          })
          .where(
            isOwned(
              identities,
              request.accountId,
              request.identityId,
              and(eq(identities.status, 'ready'), isNotNull(identities.onboardedAt)),
            ),
          )
          .returning();
        if (accepted && request.attachments)
          await replaceAttachments(tx, request.accountId, request.identityId, request.attachments);
        return accepted;
      })
      .catch(async (error: unknown) => {
        // A list refused in the transaction (a tool deleted since the check): the uploads go too.
        await store.deletePrefix(prefix);
        throw error;
      });
    if (!row) {
      await store.deletePrefix(prefix);
      throw new ApiError(409, 'This identity is already retraining; poll its status and try again when it is ready');
    }
    this.start(row.id);
    return row;
  }

  /**
   * Resume retrains a dead process left behind: their lease ran out (or, rows from before
   * leases, untouched for `graceSeconds`). Each is claimed first, so one process resumes it.
   */
  async resumeInterrupted(graceSeconds: number, ignoreLeases = false): Promise<number> {
    const rows = await this.deps.db
      .select({ id: identities.id })
      .from(identities)
      .where(
        and(eq(identities.status, 'training'), isNotNull(identities.onboardedAt), orphaned(graceSeconds, ignoreLeases)),
      );
    let resumed = 0;
    for (const { id } of rows) {
      if (
        this.running.has(id) ||
        !(await claimOrphanedRetrain(this.deps.db, id, this.deps.workLeaseSeconds, graceSeconds, ignoreLeases))
      )
        continue;
      this.start(id);
      resumed++;
    }
    return resumed;
  }

  /** Resolves when no retrain is running in this process (shutdown, tests). */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running.values()]);
  }

  private start(identityId: string): void {
    const releaseLease = holdLease(this.deps.db, identityId, this.deps.workLeaseSeconds);
    const job = this.run(identityId)
      .catch((error) => log.error({ err: error, identity_id: identityId }, 'a retrain failed to finish'))
      .finally(() => {
        releaseLease();
        this.running.delete(identityId);
      });
    this.running.set(identityId, job);
  }

  /** The retrain's voice: a resumed retrain reuses the clone an interrupted run already made. */
  private async retrainedVoice(
    row: IdentityRow,
    pending: PendingRetrain,
    { bytes, audio }: { bytes: Uint8Array; audio: InspectedAudio },
  ): Promise<IdentityVoice> {
    const { db, voices } = this.deps;
    const voice = pending.voice ?? {
      presetId: null,
      multilingual: true,
      elevenlabsVoiceId: null,
      profile: sampleProfile(audio),
    };
    if (voice.elevenlabsVoiceId !== null || !voices.elevenlabs) return voice;
    const cloned = await voices.clone({ id: row.id, name: row.name }, { bytes, kind: audio.kind }, voice.profile);
    await db
      .update(identities)
      .set({ pendingRetrain: { ...pending, voice: cloned } })
      .where(and(eq(identities.id, row.id), eq(identities.status, 'training')));
    return cloned;
  }

  /** The identity is ready again with what the retrain made, and identity.ready is sent; none when it was deleted meanwhile. */
  private markRetrained(
    row: IdentityRow,
    pending: PendingRetrain,
    trained: Pick<TrainingResult, 'image' | 'training'>,
    voice: IdentityVoice | undefined,
  ) {
    const { db } = this.deps;
    const identityId = row.id;
    return db.transaction(async (tx) => {
      const [ready] = await tx
        .update(identities)
        .set({
          status: 'ready',
          detail: null,
          image: trained.image,
          audio: pending.audio ?? row.audio,
          voice: voice ?? row.voice,
          training: trained.training,
          pendingRetrain: null,
          updatedAt: new Date(),
        })
        .where(and(eq(identities.id, identityId), eq(identities.status, 'training')))
        .returning({ id: identities.id, name: identities.name, pipelineId: identities.pipelineId });
      if (ready)
        await writeEvent(tx, row.accountId, 'identity.ready', {
          identity_id: identityId,
          name: ready.name,
          pipeline_id: ready.pipelineId,
          retrained: true,
        });
      return ready;
    });
  }

  private async run(identityId: string): Promise<void> {
    const { db, store, pipelines, uploadBounds, voices } = this.deps;
    const [row] = await db.select().from(identities).where(eq(identities.id, identityId));
    const pending = row?.pendingRetrain;
    if (!row || !pending) return;
    const prefix = (pending.image?.key ?? pending.audio!.key).replace(/[^/]+$/, '');
    let voice: IdentityVoice | undefined;
    const pipeline = pipelines.get(row.pipelineId);
    let retrained: TrainingResult | undefined;
    try {
      if (!pipeline) throw new Error(`pipeline ${row.pipelineId} is no longer available`);
      const imageBytes = pending.image && (await readAll(store, pending.image.key));
      const audioBytes = pending.audio && (await readAll(store, pending.audio.key));
      const image = imageBytes ? await inspectImage(imageBytes, uploadBounds) : undefined;
      const audio = audioBytes ? await inspectAudio(audioBytes, uploadBounds) : undefined;
      if (audio) voice = await this.retrainedVoice(row, pending, { bytes: audioBytes!, audio });
      // An avatar the identity named at the provider stays; one training made from the old photo is replaced.
      const named = row.training?.provider_avatar_made === true ? undefined : providerAvatarOf(row.training);
      if (image)
        retrained = await timedTraining(pipeline.id, () =>
          pipeline.train({ identityId, image, audio, store, prefix, providerAvatarId: named }),
        );
      const trained = retrained ?? { image: row.image, training: row.training ?? {} };
      const updated = await this.markRetrained(row, pending, trained, voice);
      if (!updated) {
        // deleted while training
        await store.deletePrefix(prefix);
        await voices.release(voice);
        await releaseTraining(pipeline, retrained?.training);
        return;
      }
      if (voice) await voices.release(row.voice);
      if (pending.image) await store.delete(pending.image.key); // the raw upload may carry EXIF location data
      const stale = [
        ...(image ? keysOf(row.image, row.training) : []),
        ...(pending.audio && row.audio ? [row.audio.key] : []),
      ];
      for (const key of stale) await store.delete(key);
      if (retrained) await releaseTraining(pipeline, row.training);
    } catch (error) {
      log.error({ err: error, identity_id: identityId }, 'retraining failed');
      const detail = retrainFailure(error);
      await db.transaction(async (tx) => {
        const [failed] = await tx
          .update(identities)
          .set({ status: 'ready', detail, pendingRetrain: null, updatedAt: new Date() })
          .where(eq(identities.id, identityId))
          .returning({ name: identities.name });
        if (failed)
          await writeEvent(tx, row.accountId, 'identity.training_failed', {
            identity_id: identityId,
            name: failed.name,
            detail,
          });
      });
      await store.deletePrefix(prefix);
      await voices.release(voice);
      await releaseTraining(pipeline, retrained?.training);
    }
  }
}

/**
 * What a failed retrain's `detail` tells the identity's owner: what they can fix (the photo,
 * the sample: the media checks' own words), or whom to wait for (a provider); never our
 * internals, which go to the log.
 */
export function retrainFailure(error: unknown): string {
  const kept = 'the previous photo and voice are still in use';
  if (error instanceof MediaError) return `Retraining failed: ${error.field}: ${error.message}; ${kept}`;
  if (error instanceof VoiceProviderError || (error instanceof ApiError && error.status === 502)) {
    return `Retraining failed: a provider did not answer (${error instanceof ApiError ? error.message.replace(/; nothing was kept or charged$/, '') : 'the voice provider could not clone the sample'}); ${kept}. Try again later`;
  }
  return `Retraining failed on the service's side; ${kept}. Try again; if it fails again, tell the service's operator`;
}

async function readAll(store: AssetStore, key: string): Promise<Uint8Array> {
  const blob = await store.get(key);
  if (!blob) throw new Error(`uploaded file ${key} is missing`);
  return new Uint8Array(await blob.arrayBuffer());
}
