// Creating an identity (docs/api.md#identities-create, #identity-states): first the account's
// training slot and its credits are checked and the row reserved (`created`), before the
// uploads are decoded; then the row moves created → training → ready within the call, and the
// onboarding charge commits in the same transaction that makes it ready. Any failure removes
// the row and its files: nothing half-built, nothing charged.
// Uploaded audio is cloned into the identity's voice here too (ElevenLabs when configured).
import { eq } from 'drizzle-orm';
import { isTestAccount, liveAccountIdOf } from '../accounts/index.ts';
import type { AssetStore } from '../assets/index.ts';
import type { Language } from '../contract/languages.ts';
import { type CreditLedger, InsufficientCredits } from '../credits/index.ts';
import { newId, randomBase62 } from '../db/ids.ts';
import type { Database } from '../db/index.ts';
import { ApiError } from '../http/errors.ts';
import { type AccountLimits, type AttemptLimiter, lockAccountLimits } from '../limits/index.ts';
import { log } from '../logging/index.ts';
import type { AudioKind, InspectedAudio, InspectedImage, StoredAudio } from '../media/index.ts';
import { creditsCharged, timedTraining } from '../metrics/index.ts';
import type { Pipeline, TrainingResult } from '../pipelines/index.ts';
import { releaseTraining } from '../pipelines/index.ts';
import type { IdentityVoice, VoiceProfile, Voices } from '../voices/index.ts';
import { writeEvent } from '../webhooks/index.ts';
import { type AttachmentChange, changesAttachments, replaceAttachments } from './attachments.ts';
import type { IdentityRow } from './queries.ts';
import { identities } from './schema.ts';
import { admitTraining } from './training-limits.ts';
import { holdLease, leaseUntil } from './work-lease.ts';

export interface OnboardingDeps {
  db: Database;
  limits: AccountLimits;
  /** The hourly count of trainings (identities/training-limits.ts). */
  trainings: AttemptLimiter;
  ledger: CreditLedger;
  store: AssetStore;
  onboardingCost: number;
  voices: Voices;
  workLeaseSeconds: number;
}

export interface UploadedAudio {
  bytes: Uint8Array;
  inspected: InspectedAudio;
  /** Measured from the decoded sample, for the offline text-to-speech. */
  profile: VoiceProfile;
}

/** An identity row reserved for a create (`created`, invisible to reads), leased to this process. */
export interface Reservation {
  id: string;
  accountId: string;
  prefix: string;
}

/** What the create's uploads turned into, once decoded. */
export interface NewIdentity {
  image: InspectedImage;
  audio?: UploadedAudio;
}

export interface IdentityFields {
  accountId: string;
  name: string;
  prompt: string;
  language: Language;
  /** Its sessions are recorded by default (docs/api.md#recordings). */
  recordSessions?: boolean;
  /** The outcome its sessions fill in (docs/api.md#outcomes); absent or null: none. */
  outcomeSchema?: Record<string, unknown> | null;
  pipeline: Pipeline;
  /** A preset chosen instead of uploading audio; null or absent: the default voice. */
  presetVoice?: IdentityVoice | null;
  /** The provider's avatar the identity names, for hosted pipelines (already checked with the provider). */
  providerAvatarId?: string;
  /** Its tools and documents (checked again as the row is reserved, with it). */
  attachments?: AttachmentChange;
}

const AUDIO_EXTENSIONS: Record<AudioKind, string> = { 'audio/wav': 'wav', 'audio/mpeg': 'mp3', 'audio/mp4': 'm4a' };

/** Every file of an identity lives under this prefix; a new token per training keeps old URLs from being reused. */
export function identityPrefix(identityId: string): string {
  return `identities/${identityId}/`;
}

export function trainingPrefix(identityId: string): string {
  return `${identityPrefix(identityId)}${randomBase62(24)}/`;
}

export async function storeVoice(store: AssetStore, prefix: string, audio: UploadedAudio): Promise<StoredAudio> {
  const key = `${prefix}voice.${AUDIO_EXTENSIONS[audio.inspected.kind]}`;
  await store.put(key, audio.bytes, audio.inspected.kind);
  return { key, contentType: audio.inspected.kind, durationSeconds: audio.inspected.durationSeconds };
}

function insufficient(cost: number): ApiError {
  return new ApiError(402, `Insufficient credits: onboarding an identity costs ${cost} credits`);
}

function insufficientForTest(cost: number): ApiError {
  return new ApiError(
    402,
    `Insufficient credits: a test identity is free, but is made only while the live account could pay a live one (${cost} credits)`,
  );
}

/**
 * Takes the account's training slot (429 past its limits) and checks its credits (402), with
 * the account locked, and reserves the identity's row: all before the uploads are decoded, so
 * an account that cannot pay or is over its limits costs no decoding, ffmpeg or face search.
 */
/** What making an identity costs this account: nothing for a test account (docs/api.md#test-mode). */
const onboardingCostFor = (deps: { onboardingCost: number }, accountId: string) =>
  isTestAccount(accountId) ? 0 : deps.onboardingCost;

export async function reserveIdentity(deps: OnboardingDeps, fields: IdentityFields): Promise<Reservation> {
  const { db, ledger } = deps;
  const onboardingCost = onboardingCostFor(deps, fields.accountId);
  const id = newId('idn');
  await db.transaction(async (tx) => {
    await admitTraining(
      tx,
      fields.accountId,
      await lockAccountLimits(tx, fields.accountId, deps.limits),
      deps.trainings,
    );
    // Refuse early so nothing is decoded or stored; the charge at the end is what really decides.
    if (onboardingCost > 0 && ((await ledger.balance(fields.accountId, tx)) ?? 0) < onboardingCost)
      throw insufficient(onboardingCost);
    // A test identity costs nothing, but an owner whose live account could not pay for a live
    // one makes none (docs/decisions.md#embed-and-test-mode).
    if (
      isTestAccount(fields.accountId) &&
      deps.onboardingCost > 0 &&
      ((await ledger.balance(liveAccountIdOf(fields.accountId), tx)) ?? 0) < deps.onboardingCost
    )
      throw insufficientForTest(deps.onboardingCost);
    await tx.insert(identities).values({
      id,
      accountId: fields.accountId,
      name: fields.name,
      prompt: fields.prompt,
      language: fields.language,
      recordSessions: fields.recordSessions ?? false,
      outcomeSchema: fields.outcomeSchema ?? null,
      pipelineId: fields.pipeline.id,
      status: 'created',
      // Until training stores the photo (the row is invisible meanwhile).
      image: { key: '', contentType: 'image/png', width: 0, height: 0, variants: {} },
      workedUntil: leaseUntil(deps.workLeaseSeconds),
    });
    // With the row: a list refused here leaves no row; a create that fails later takes the lists with it (cascade).
    if (fields.attachments && changesAttachments(fields.attachments))
      await replaceAttachments(tx, fields.accountId, id, fields.attachments);
  });
  return { id, accountId: fields.accountId, prefix: trainingPrefix(id) };
}

/**
 * Trains a reserved identity from its uploads (`decode` reads them) and makes it ready,
 * charged; on any failure the row, its files and any clone go.
 */
export async function onboardIdentity(
  deps: OnboardingDeps,
  reservation: Reservation,
  fields: IdentityFields,
  decode: () => Promise<NewIdentity>,
): Promise<IdentityRow> {
  const { db, ledger, store, voices } = deps;
  const onboardingCost = onboardingCostFor(deps, fields.accountId);
  const { id, prefix } = reservation;
  // While this process works on it, no other's recovery takes the row for orphaned.
  const releaseLease = holdLease(db, id, deps.workLeaseSeconds);
  let trained: TrainingResult | undefined;
  try {
    const uploads = await decode();
    await db.update(identities).set({ status: 'training', updatedAt: new Date() }).where(eq(identities.id, id));
    trained = await timedTraining(fields.pipeline.id, () =>
      fields.pipeline.train({
        identityId: id,
        image: uploads.image,
        audio: uploads.audio?.inspected,
        store,
        prefix,
        providerAvatarId: fields.providerAvatarId,
      }),
    );
    const training = trained.training;
    const image = trained.image;
    const audio = uploads.audio ? await storeVoice(store, prefix, uploads.audio) : null;
    let voice = fields.presetVoice ?? null;
    if (uploads.audio) {
      // Last, since it is the one outside call; recorded at once so a cleanup (even after a crash) can delete it.
      voice = await voices.clone(
        { id, name: fields.name },
        { bytes: uploads.audio.bytes, kind: uploads.audio.inspected.kind },
        uploads.audio.profile,
      );
      await db.update(identities).set({ voice }).where(eq(identities.id, id));
    }
    const ready = await db.transaction(async (tx) => {
      if (onboardingCost > 0) {
        await ledger.charge(tx, {
          accountId: fields.accountId,
          amount: onboardingCost,
          kind: 'onboarding',
          reference: `identity:${id}`,
        });
      }
      const now = new Date();
      const [row] = await tx
        .update(identities)
        .set({ status: 'ready', image, audio, voice, training, onboardedAt: now, updatedAt: now })
        .where(eq(identities.id, id))
        .returning();
      await writeEvent(tx, fields.accountId, 'identity.ready', {
        identity_id: id,
        name: row!.name,
        pipeline_id: row!.pipelineId,
        retrained: false,
      });
      return row!;
    });
    if (onboardingCost > 0) creditsCharged.inc({ kind: 'onboarding' }, onboardingCost);
    log.info({ identity_id: id, account_id: fields.accountId, pipeline: fields.pipeline.id }, 'identity ready');
    return ready;
  } catch (error) {
    // If this cleanup fails too, the recovery sweep finishes it: the row is invisible meanwhile.
    await discardUnfinished(db, store, voices, id).catch((e) =>
      log.error({ err: e, identity_id: id }, 'cleaning up an unfinished identity failed'),
    );
    await releaseTraining(fields.pipeline, trained?.training);
    throw error instanceof InsufficientCredits ? insufficient(onboardingCost) : error;
  } finally {
    releaseLease();
  }
}

/** Remove an identity that never finished onboarding: files and cloned voice first, so a row always covers them. */
export async function discardUnfinished(
  db: Database,
  store: AssetStore,
  voices: Voices,
  identityId: string,
): Promise<void> {
  const [row] = await db.select({ voice: identities.voice }).from(identities).where(eq(identities.id, identityId));
  await store.deletePrefix(identityPrefix(identityId));
  await voices.release(row?.voice);
  await db.delete(identities).where(eq(identities.id, identityId));
}
