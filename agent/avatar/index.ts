// The avatar in the room, split as LiveKit's Python `voice/avatar` is: `AvatarSpeech`
// receives the agent's speech, a renderer (agent/renderers) draws the frames, and
// `AvatarRunner` paces them and publishes audio and video together. With an avatar the
// agent publishes no voice track of its own: the visitor hears the speech once. Without an
// avatar the same runner publishes the voice alone: one output path, which never waits for a
// listener (agents 1.9's own room output waits for the visitor to subscribe, and a session
// whose visitor left before that could not close for a minute).
import type { Room } from '@livekit/rtc-node';
import type { JobIdentity } from '../metadata.ts';
import { avatarFrameSize, createAvatarRenderer } from '../renderers/index.ts';
import { AvatarRunner } from './runner.ts';
import { AvatarSpeech } from './speech.ts';

export { AVATAR_AUDIO_TRACK, AVATAR_VIDEO_TRACK, VOICE_TRACK } from './runner.ts';
export { AVATAR_SAMPLE_RATE, AvatarSpeech } from './speech.ts';

export interface AvatarOptions {
  room: Room;
  identity: JobIdentity | null;
  formFactor: 'phone' | 'desktop' | null;
  /** Called once with `performance.now()` when the first frame went out (billing starts there). */
  onFirstFrame(atMs: number): void;
  logger: { warn(message: string): void };
}

export interface Avatar {
  /** The agent session's audio output. */
  speech: AvatarSpeech;
  stop(): Promise<void>;
}

/** Publishes the avatar's tracks and starts streaming; resolves once the first frame is out. */
export async function startAvatar(options: AvatarOptions): Promise<Avatar> {
  const speech = new AvatarSpeech();
  const renderer = createAvatarRenderer({ identity: options.identity, size: avatarFrameSize(options.formFactor), logger: options.logger });
  const runner = new AvatarRunner({ room: options.room, renderer, speech, onFirstFrame: options.onFirstFrame, logger: options.logger });
  await runner.start();
  return { speech, stop: () => runner.stop() };
}

/** A session without an avatar: the agent's voice alone, paced and published the same way. */
export async function startVoice(options: { room: Room; logger: { warn(message: string): void } }): Promise<Avatar> {
  const speech = new AvatarSpeech();
  const runner = new AvatarRunner({ room: options.room, renderer: null, speech, onFirstFrame: () => {}, logger: options.logger });
  await runner.start();
  return { speech, stop: () => runner.stop() };
}
