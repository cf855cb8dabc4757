// What the job needs from whatever draws the avatar: publish one video track named
// `avatar` into the room, say when its first frame went out (billing starts there), stop.
import type { Room } from '@livekit/rtc-node';
import type { JobIdentity } from '../metadata.ts';

export const AVATAR_TRACK_NAME = 'avatar';
export const AVATAR_FPS = 25;

export interface FrameSize {
  width: number;
  height: number;
}

/** Portrait for phones and when the client did not say; landscape for desktops. */
export function avatarFrameSize(formFactor: 'phone' | 'desktop' | null): FrameSize {
  return formFactor === 'desktop' ? { width: 960, height: 540 } : { width: 540, height: 960 };
}

export interface AvatarRendererOptions {
  /** Whose face to draw; null when the session has no identity. */
  identity: JobIdentity | null;
  size: FrameSize;
  /** Called once, right after the first frame was handed to the published track, with `performance.now()`. */
  onFirstFrame(atMs: number): void;
  /** Where problems that do not stop the stream are told (a portrait that failed to load). */
  logger?: { warn(message: string): void };
}

export interface AvatarRenderer {
  /** Publishes the `avatar` track (camera source) into the connected room and starts streaming frames. */
  start(room: Room): Promise<void>;
  /** Stops streaming and releases the track; safe to call more than once, and before `start` finished. */
  stop(): Promise<void>;
}
