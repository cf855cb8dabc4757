// The dispatch metadata (docs/api.md#internal): what the control plane gives each agent job,
// as a JSON string on LiveKit's agent dispatch — which session it serves, where to report,
// and what to render and say. The control plane builds it with this type
// (src/sessions/start.ts); the job validates it with this schema (agent/job.ts).
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { DispatchTool } from './agent-tools.ts';
import { AVATAR_SHAPES, FORM_FACTORS } from './avatar-video.ts';
import { LANGUAGES } from './languages.ts';
import { RECORDING_NOTICE_MAX_CHARS } from './recordings.ts';
import { HttpUrl, literalUnion } from './schema-parts.ts';
import { GREETING_MAX_CHARS, IDLE_TIMEOUT_MAX_SECONDS, SESSION_CONTEXT_MAX_CHARS } from './session-direction.ts';
import { DispatchMemory } from './visitor-memory.ts';

export const DispatchIdentity = Type.Object({
  identity_id: Type.String({ minLength: 1 }),
  name: Type.String(),
  prompt: Type.String(),
  language: Type.String({ minLength: 1 }),
  /** Names the avatar pipeline; absent from a control plane before pipelines: the built-in one. */
  pipeline_id: Type.Optional(Type.String({ minLength: 1 })),
  /** The face to render (the identity's render variant). */
  image_url: HttpUrl,
  audio_url: Type.Union([HttpUrl, Type.Null()]),
  /**
   * What the identity's training stored for its renderer, by name (e.g. `portrait.image`,
   * `portrait.rig`, `portrait.texture.mouth`, the same for `landscape`) → URL. Absent or empty
   * for identities trained before the talking head: they get the stand-in.
   */
  assets: Type.Optional(Type.Record(Type.String(), HttpUrl)),
  /** The avatar at a hosted provider that animates this identity (pipelines `anam`, `bey`); absent for the others. */
  provider_avatar_id: Type.Optional(Type.String({ minLength: 1 })),
});

export const DispatchVoice = Type.Object({
  preset_id: Type.Union([Type.String(), Type.Null()]),
  multilingual: Type.Boolean(),
  /** Used when the agent's TTS is ElevenLabs; null: DEFAULT_ELEVENLABS_VOICE_ID speaks. */
  elevenlabs_voice_id: Type.Union([Type.String(), Type.Null()]),
  /** Used by the offline TTS. */
  profile: Type.Object({
    pitch_hz: Type.Number({ exclusiveMinimum: 0 }),
    words_per_minute: Type.Number({ exclusiveMinimum: 0 }),
  }),
});

export const DispatchMetadataSchema = Type.Object({
  session_id: Type.String({ pattern: '^ses_' }),
  report_url: HttpUrl,
  report_token: Type.String({ minLength: 1 }),
  avatar_enabled: Type.Boolean(),
  /** The LiveKit identity minted into the visitor's token: only this participant makes minutes billable. */
  visitor_identity: Type.String({ minLength: 1 }),
  billing_interval_seconds: Type.Integer({ exclusiveMinimum: 0 }),
  /**
   * Minutes already billed by an earlier job of this session (one whose worker died): this
   * job numbers its minutes on from there. Absent: 0.
   */
  minute_offset: Type.Optional(Type.Integer({ minimum: 0 })),
  /**
   * What was left of the last paid minute when the earlier job's avatar was lost (ms): this
   * job's first minute begins that long after the visitor receives its avatar, so the rest of
   * that minute is not charged twice and the time without an avatar not at all. Absent: 0.
   */
  paid_left_ms: Type.Optional(Type.Integer({ minimum: 0 })),
  identity: Type.Union([DispatchIdentity, Type.Null()]),
  /** The voice the agent speaks with. Null (or absent, from an older control plane): the default English-only voice. */
  voice: Type.Optional(Type.Union([DispatchVoice, Type.Null()])),
  language: literalUnion(LANGUAGES),
  visual_awareness: Type.Boolean(),
  form_factor: Type.Union([literalUnion(FORM_FACTORS), Type.Null()]),
  /**
   * The avatar video's shape, decided by the control plane (avatarShapeFor). Absent from an
   * older control plane: landscape for desktops.
   */
  avatar_shape: Type.Optional(literalUnion(AVATAR_SHAPES)),
  /** The start's `context`: added to the identity's prompt for this session. Absent or null: none. */
  context: Type.Optional(Type.Union([Type.String({ maxLength: SESSION_CONTEXT_MAX_CHARS }), Type.Null()])),
  /** The start's `greeting`, spoken exactly; "" says nothing first. Absent or null: the built greeting. */
  greeting: Type.Optional(Type.Union([Type.String({ maxLength: GREETING_MAX_CHARS }), Type.Null()])),
  /** Whether the visitor's app may order say / interrupt / context over RPC. Absent: false. */
  client_control: Type.Optional(Type.Boolean()),
  /** A silent visitor is asked after this long, and the session ends after it again; 0 never. Absent: 0. */
  idle_timeout_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: IDLE_TIMEOUT_MAX_SECONDS })),
  /** The tools the agent may call (the start's `tool_ids`, or the identity's). Absent: none. */
  tools: Type.Optional(Type.Array(DispatchTool)),
  /** Where the job asks the control plane to call a webhook tool (agent-tools.ts ToolCallRequest), with its report token. */
  tool_calls_url: Type.Optional(HttpUrl),
  /** Where the job retrieves passages for each visitor turn (knowledge.ts); absent: the session has no documents. */
  knowledge_url: Type.Optional(HttpUrl),
  /** A test session (a test key's, docs/api.md#test-mode): the avatar's video carries a visible "TEST" mark. Absent: false. */
  test: Type.Optional(Type.Boolean()),
  /** Whether the job records the session (contract/recordings.ts), sending its chunks with its report token. Absent: false. */
  record: Type.Optional(Type.Boolean()),
  /** The outcome the job writes once the session ended (contract/outcomes.ts). Absent or null: none. */
  outcome_schema: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
  /**
   * A session with a visitor and memory on (contract/visitor-memory.ts): what is remembered of
   * them, and the job writes what to remember once it ended. Absent or null: no memory.
   */
  memory: Type.Optional(Type.Union([DispatchMemory, Type.Null()])),
  /** Said before the greeting of a recorded session (the start's `recording_notice`). Absent or null: nothing. */
  recording_notice: Type.Optional(Type.Union([Type.String({ maxLength: RECORDING_NOTICE_MAX_CHARS }), Type.Null()])),
});

export type DispatchIdentity = Static<typeof DispatchIdentity>;
export type DispatchVoice = Static<typeof DispatchVoice>;
export type DispatchMetadata = Static<typeof DispatchMetadataSchema>;
/** As the job holds it once parsed: the voice is always there (null for the default). */
export type ParsedDispatch = DispatchMetadata & { voice: DispatchVoice | null };

/**
 * The ElevenLabs voice that speaks when the dispatch names none: the default preset's (a
 * premade voice every ElevenLabs account has), also for a voice cloned while ElevenLabs was
 * not configured.
 */
export const DEFAULT_ELEVENLABS_VOICE_ID = '21m00Tcm4TlvDqvHYnJl'; // Rachel

type DispatchParse = { ok: true; metadata: ParsedDispatch } | { ok: false; problem: string };

/** Unknown fields are dropped, so a newer control plane may add some before the agent knows them. */
export function parseDispatchMetadata(raw: string): DispatchParse {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return { ok: false, problem: 'the job metadata is not JSON' };
  }
  const cleaned = Value.Clean(DispatchMetadataSchema, Value.Clone(json));
  if (!Value.Check(DispatchMetadataSchema, cleaned)) {
    const problems = [...Value.Errors(DispatchMetadataSchema, cleaned)]
      .slice(0, 5)
      .map((error) => `${error.path || '/'}: ${error.message}`);
    return { ok: false, problem: problems.join('; ') };
  }
  return { ok: true, metadata: { ...cleaned, voice: cleaned.voice ?? null } };
}

/** The room metadata the control plane writes on each session's room: a late job checks it is still its session's. */
export interface SessionRoomMetadata {
  session_id: string;
  avatar_enabled: boolean;
  language: string;
  form_factor: string | null;
  /** The session is recorded: clients show a visible mark (docs/api.md#recordings). Absent: not recorded. */
  recording?: boolean;
}

export function isSessionRoom(roomMetadata: string | undefined, sessionId: string): boolean {
  try {
    return (JSON.parse(roomMetadata ?? '') as Partial<SessionRoomMetadata>).session_id === sessionId;
  } catch {
    return false;
  }
}
