// What serves the avatar of a pipeline, in one of two ways:
// - an in-process renderer (Python's `VideoGenerator` role): given the slice of speech that
//   goes out with a frame, it returns that frame; pacing, publishing and the speech itself
//   belong to agent/avatar. The built-in CPU talking head, or a GPU neural renderer.
// - an avatar service: a separate LiveKit participant that joins the session's room, takes
//   the agent's speech over the agents' avatar protocol (`lk.audio_stream` byte streams,
//   `lk.clear_buffer` and `lk.playback_finished` RPCs) and publishes audio and video on the
//   agent's behalf (`lk.publish_on_behalf`). A third-party avatar API, typically.
// A pipeline names one of them under its id (agent/pipelines/index.ts); the session code
// never knows which. This is the agent's half of a pipeline; its control-plane half
// (training) is src/pipelines/types.ts.
import type { VideoFrame } from '@livekit/rtc-node';
import type { AvatarShape, DispatchIdentity, FrameSize } from '../../src/contract/index.ts';
import type { AgentLogger } from '../logging.ts';
import type { Viseme } from '../visemes/index.ts';

export interface FrameInput {
  /** The audio published with this frame (48 kHz mono, one frame's worth); silence when not speaking. */
  audio: Int16Array;
  /** How much of `audio` is speech (0 while the avatar listens). */
  speechSamples: number;
  /** What the speech says, when its TTS timed it: the share of the frame each viseme covers. */
  visemes?: Partial<Record<Viseme, number>>;
  /** Whether a stressed syllable starts in this frame; absent when the voice does not mark stress. */
  stressed?: boolean;
  /** Whether the visitor is speaking; absent when not known. */
  visitorSpeaking?: boolean;
  /** Time since the first frame, on the frame grid. */
  elapsedMs: number;
}

export interface AvatarRenderer {
  readonly size: FrameSize;
  /** Loads what the frames need (the portrait). Called once, before the first frame. */
  prepare(): Promise<void>;
  /** The frame for this instant. The returned frame's pixels may be reused by the next call. */
  nextFrame(input: FrameInput): VideoFrame;
}

export interface AvatarRendererOptions {
  /** The Likeness identity whose face to draw; null when the session has none. */
  identity: DispatchIdentity | null;
  size: FrameSize;
  /** Where problems that do not stop the stream are told (a portrait that failed to load): the job's logger. */
  logger: Pick<AgentLogger, 'warn'>;
}

/** A pipeline whose frames are drawn in the job process and published by the job's avatar runner. */
export interface RendererPipeline {
  kind: 'renderer';
  id: string;
  /** The renderer for this identity; null when it cannot serve it (e.g. trained before this pipeline's assets existed). */
  createRenderer(options: AvatarRendererOptions): AvatarRenderer | null;
}

/** What an avatar service is given to join a session's room. */
export interface AvatarServiceRequest {
  /** The LiveKit server, as the job reached it. */
  livekitUrl: string;
  roomName: string;
  /** A token for `avatarParticipantIdentity` in this room, with `lk.publish_on_behalf` set to the agent. */
  token: string;
  /** The LiveKit participant identity the service must join as (the agent streams its speech to it). */
  avatarParticipantIdentity: string;
  /** The agent's LiveKit participant identity, on whose behalf the service publishes. */
  agentParticipantIdentity: string;
  /** The Likeness identity whose face the service animates (its photo, assets, provider avatar); null without one. */
  identity: DispatchIdentity | null;
  shape: AvatarShape;
  /** The agent's speech arrives at this rate (mono 16-bit PCM on `lk.audio_stream`): the pipeline's `sampleRate`. */
  sampleRate: number;
}

/** A running avatar service session. */
export interface AvatarServiceSession {
  /** Ends the service's side (e.g. tells its API the session is over); the job removes the participant itself. */
  close(): Promise<void>;
}

/** A pipeline whose avatar is a separate participant in the room, speaking the agents' avatar protocol. */
export interface AvatarServicePipeline {
  kind: 'service';
  id: string;
  /** The rate the service takes the agent's speech at (default AVATAR_SAMPLE_RATE, 48 kHz). */
  sampleRate?: number;
  /** Asks the service to join; resolves once it accepted (not necessarily joined yet). */
  start(request: AvatarServiceRequest): Promise<AvatarServiceSession>;
}

export type AvatarPipeline = RendererPipeline | AvatarServicePipeline;
