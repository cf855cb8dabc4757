// What draws the avatar (Python's `VideoGenerator` role): given the slice of speech that
// goes out with a frame, it returns that frame. Pacing, publishing and the speech itself
// belong to agent/avatar; a renderer only draws, so a new pipeline slots in here.
import type { VideoFrame } from '@livekit/rtc-node';
import type { JobIdentity } from '../metadata.ts';

export const AVATAR_FPS = 25;

export interface FrameSize {
  width: number;
  height: number;
}

/** Portrait for phones and when the client did not say; landscape for desktops. */
export function avatarFrameSize(formFactor: 'phone' | 'desktop' | null): FrameSize {
  return formFactor === 'desktop' ? { width: 960, height: 540 } : { width: 540, height: 960 };
}

export interface FrameInput {
  /** The audio published with this frame (48 kHz mono, one frame's worth); silence when not speaking. */
  audio: Int16Array;
  /** How much of `audio` is speech (0 while the avatar listens). */
  speechSamples: number;
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
  /** Whose face to draw; null when the session has no identity. */
  identity: JobIdentity | null;
  size: FrameSize;
  /** Where problems that do not stop the stream are told (a portrait that failed to load). */
  logger?: { warn(message: string): void };
}
