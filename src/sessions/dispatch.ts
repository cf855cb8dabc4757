// The dispatch metadata of a session's agent job (src/contract/dispatch.ts), built from the
// started session and its identity: what the job renders, says and reports to.
import type { AssetLinks } from '../assets/index.ts';
import type { SessionSettings } from '../config.ts';
import {
  avatarShapeFor,
  type DispatchMemory,
  type DispatchMetadata,
  type DispatchVoice,
  type FormFactor,
  type Language,
} from '../contract/index.ts';
import type { IdentityRow } from '../identities/index.ts';
import { providerAvatarOf } from '../pipelines/index.ts';
import type { IdentityVoice } from '../voices/index.ts';
import type { SessionToolbox } from './toolbox.ts';

export interface DispatchInput {
  sessionId: string;
  reportUrl: string;
  reportToken: string;
  avatarEnabled: boolean;
  visitorIdentity: string;
  identity: IdentityRow | undefined;
  language: Language;
  visualAwareness: boolean;
  formFactor: FormFactor | null;
  settings: Pick<SessionSettings, 'billingIntervalSeconds' | 'landscapeVideo'>;
  /** Signed links to the identity's files, as clients and avatar services reach them (PUBLIC_URL's). */
  assetLinks: AssetLinks;
  /**
   * Where the job itself fetches the face's training files: INTERNAL_URL's /assets, as it
   * reports. PUBLIC_URL may be the service's own self-signed HTTPS address, which a job's
   * fetch does not trust; the internal address also keeps the job off the public path.
   */
  internalUrl: string;
  /** What the start set to direct the conversation, as the session row keeps it. */
  direction: SessionDirection;
  recording: SessionRecording;
  /** The outcome the job writes once the session ended (the start's, else the identity's); null: none. */
  outcomeSchema: Record<string, unknown> | null;
  /** What is remembered of the session's visitor, in its scope; null: no visitor, or memory off. */
  memory: DispatchMemory | null;
  /** The session's tools and where the job calls them and retrieves passages (toolbox.ts). */
  toolbox: SessionToolbox;
  /** A test account's session (src/accounts/test-mode.ts): its video is marked "TEST". */
  test: boolean;
}

/** A session's context, greeting, client control and idle timeout (docs/api.md#sessions-context), as stored. */
export interface SessionDirection {
  /** null: none. */
  context: string | null;
  /** null: the built greeting; "": none. */
  greeting: string | null;
  clientControl: boolean;
  /** 0: never. */
  idleTimeoutSeconds: number;
}

/** Whether a session is recorded and what is said first (docs/api.md#recordings), as stored. */
export interface SessionRecording {
  record: boolean;
  /** null: nothing. */
  recordingNotice: string | null;
}

export function dispatchMetadata(input: DispatchInput): DispatchMetadata {
  const { identity, assetLinks } = input;
  const providerAvatarId = providerAvatarOf(identity?.training);
  return {
    session_id: input.sessionId,
    report_url: input.reportUrl,
    report_token: input.reportToken,
    avatar_enabled: input.avatarEnabled,
    visitor_identity: input.visitorIdentity,
    billing_interval_seconds: input.settings.billingIntervalSeconds,
    identity: identity
      ? {
          identity_id: identity.id,
          name: identity.name,
          prompt: identity.prompt,
          language: identity.language,
          pipeline_id: identity.pipelineId,
          image_url: assetLinks.url(identity.image.variants.render?.key ?? identity.image.key),
          audio_url: identity.audio ? assetLinks.url(identity.audio.key) : null,
          assets: dispatchAssets(identity.training, assetLinks.withBase(`${input.internalUrl}/assets`)),
          ...(providerAvatarId && { provider_avatar_id: providerAvatarId }),
        }
      : null,
    voice: dispatchVoice(identity?.voice),
    language: input.language,
    visual_awareness: input.visualAwareness,
    form_factor: input.formFactor,
    avatar_shape: avatarShapeFor(input.formFactor, input.settings.landscapeVideo),
    context: input.direction.context,
    greeting: input.direction.greeting,
    client_control: input.direction.clientControl,
    idle_timeout_seconds: input.direction.idleTimeoutSeconds,
    ...input.toolbox,
    test: input.test,
    record: input.recording.record,
    recording_notice: input.recording.recordingNotice,
    outcome_schema: input.outcomeSchema,
    memory: input.memory,
  };
}

/** The asset keys a pipeline's training listed for its renderer (`training.assets`), as URLs; empty for identities trained before them. */
export function dispatchAssets(
  training: Record<string, unknown> | null | undefined,
  assetLinks: AssetLinks,
): Record<string, string> {
  const assets = training?.assets;
  if (!assets || typeof assets !== 'object' || Array.isArray(assets)) return {};
  const urls: Record<string, string> = {};
  for (const [name, key] of Object.entries(assets))
    if (typeof key === 'string' && key) urls[name] = assetLinks.url(key);
  return urls;
}

/** The voice the agent speaks with; null: the default English-only voice. */
export function dispatchVoice(voice: IdentityVoice | null | undefined): DispatchVoice | null {
  if (!voice) return null;
  return {
    preset_id: voice.presetId,
    multilingual: voice.multilingual,
    elevenlabs_voice_id: voice.elevenlabsVoiceId,
    profile: { pitch_hz: voice.profile.pitchHz, words_per_minute: voice.profile.wordsPerMinute },
  };
}
