// Creating an identity (docs/api.md#identities-create, #identity-states): the row moves created → training → ready
// within the call, and the onboarding charge commits in the same transaction that makes it
// ready. Any failure removes the row and its files: nothing half-built, nothing charged.
// Uploaded audio is cloned into the identity's voice here too (ElevenLabs when configured).
import { eq } from 'drizzle-orm';
import type { AssetStore } from '../assets/index.ts';
import { CreditLedger, InsufficientCredits } from '../credits/index.ts';
import type { Database } from '../db/index.ts';
import { newId, randomBase62 } from '../db/ids.ts';
import { ApiError } from '../http/errors.ts';
import { releaseTraining, type Pipeline, type TrainingResult } from '../pipelines/index.ts';
import type { AudioKind, InspectedAudio, InspectedImage } from '../media/index.ts';
import type { Voices } from '../voices/index.ts';
import type { IdentityRow } from './queries.ts';
import type { Language } from '../contract/languages.ts';
import type { StoredAudio } from '../media/stored.ts';
import type { IdentityVoice, VoiceProfile } from '../voices/voice.ts';
import { identities } from './schema.ts';
import { holdLease, leaseUntil } from './work-lease.ts';

export interface OnboardingDeps {
  db: Database;
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

export interface NewIdentity {
  accountId: string;
  name: string;
  prompt: string;
  language: Language;
  pipeline: Pipeline;
  image: InspectedImage;
  audio?: UploadedAudio;
  /** A preset chosen instead of uploading audio; null or absent: the default voice. */
  presetVoice?: IdentityVoice | null;
  /** The provider's avatar the identity names, for hosted pipelines (already checked with the provider). */
  providerAvatarId?: string;
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

export async function onboardIdentity(deps: OnboardingDeps, input: NewIdentity): Promise<IdentityRow> {
  const { db, ledger, store, onboardingCost, voices } = deps;
  // Refuse early so nothing is stored; the charge below is what really decides.
  if (onboardingCost > 0 && !(await ledger.canAfford(input.accountId, onboardingCost))) throw insufficient(onboardingCost);

  const id = newId('idn');
  const prefix = trainingPrefix(id);
  await db.insert(identities).values({
    id,
    accountId: input.accountId,
    name: input.name,
    prompt: input.prompt,
    language: input.language,
    pipelineId: input.pipeline.id,
    status: 'created',
    image: { key: '', contentType: input.image.kind, width: input.image.width, height: input.image.height, variants: {} },
    workedUntil: leaseUntil(deps.workLeaseSeconds),
  });
  // While this process works on it, no other's recovery takes the row for orphaned.
  const releaseLease = holdLease(db, id, deps.workLeaseSeconds);
  let trained: TrainingResult | undefined;
  try {
    await db.update(identities).set({ status: 'training', updatedAt: new Date() }).where(eq(identities.id, id));
    trained = await input.pipeline.train({ identityId: id, image: input.image, audio: input.audio?.inspected, store, prefix, providerAvatarId: input.providerAvatarId });
    const training = trained.training;
    const image = trained.image;
    const audio = input.audio ? await storeVoice(store, prefix, input.audio) : null;
    let voice = input.presetVoice ?? null;
    if (input.audio) {
      // Last, since it is the one outside call; recorded at once so a cleanup (even after a crash) can delete it.
      voice = await voices.clone({ id, name: input.name }, { bytes: input.audio.bytes, kind: input.audio.inspected.kind }, input.audio.profile);
      await db.update(identities).set({ voice }).where(eq(identities.id, id));
    }
    return await db.transaction(async (tx) => {
      if (onboardingCost > 0) {
        await ledger.charge(tx, { accountId: input.accountId, amount: onboardingCost, kind: 'onboarding', reference: `identity:${id}` });
      }
      const now = new Date();
      const [row] = await tx
        .update(identities)
        .set({ status: 'ready', image, audio, voice, training, onboardedAt: now, updatedAt: now })
        .where(eq(identities.id, id))
        .returning();
      return row!;
    });
  } catch (error) {
    // If this cleanup fails too, the recovery sweep finishes it: the row is invisible meanwhile.
    await discardUnfinished(db, store, voices, id).catch((e) => console.error(`cleanup of ${id} failed:`, e));
    await releaseTraining(input.pipeline, trained?.training);
    throw error instanceof InsufficientCredits ? insufficient(onboardingCost) : error;
  } finally {
    releaseLease();
  }
}

/** Remove an identity that never finished onboarding: files and cloned voice first, so a row always covers them. */
export async function discardUnfinished(db: Database, store: AssetStore, voices: Voices, identityId: string): Promise<void> {
  const [row] = await db.select({ voice: identities.voice }).from(identities).where(eq(identities.id, identityId));
  await store.deletePrefix(identityPrefix(identityId));
  await voices.release(row?.voice);
  await db.delete(identities).where(eq(identities.id, identityId));
}
