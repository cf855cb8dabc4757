// The avatar in the room, split as LiveKit's Python `voice/avatar` is: `AvatarSpeech`
// receives the agent's speech, a renderer (agent/pipelines) draws the frames, and
// `AvatarRunner` paces them and publishes audio and video together. With an avatar the
// agent publishes no voice track of its own: the visitor hears the speech once. Without an
// avatar the same runner publishes the voice alone: one output path, which never waits for a
// listener (agents 1.9's own room output waits for the visitor to subscribe, and a session
// whose visitor left before that could not close for a minute). A pipeline served by an
// avatar service gets the agent's speech over the avatar protocol instead (service.ts).
import type { voice } from '@livekit/agents';
import type { Room } from '@livekit/rtc-node';
import {
  type AvatarFallbackReport,
  type AvatarShape,
  avatarFrameSize,
  type DispatchIdentity,
  PUBLISH_ON_BEHALF,
} from '../../src/contract/index.ts';
import type { VideoTally } from '../conversation/quality.ts';
import type { AgentLogger } from '../logging.ts';
import { type AvatarChoice, type AvatarRenderer, chooseAvatar, fallbackRenderer } from '../pipelines/index.ts';
import { StandinRenderer } from '../pipelines/standin/index.ts';
import type { SessionRecorder } from '../recording/index.ts';
import { AvatarRunner, type AvatarRunnerOptions } from './runner.ts';
import { startAvatarService } from './service.ts';
import { AvatarSpeech } from './speech.ts';

export { tracksReceived } from './delivery.ts';
export { AvatarSpeech } from './speech.ts';

export interface AvatarPlan {
  identity: DispatchIdentity | null;
  /** Decided by the control plane (metadata `avatar_shape`). */
  shape: AvatarShape;
  logger: AgentLogger;
  /** A test session (dispatch `test`): our frames carry the "TEST" mark; an avatar service's video is its own. */
  test?: boolean;
}

/** An avatar chosen, its face loading: made before the job is in the room. */
export interface PreparedAvatar extends AvatarPlan {
  choice: Promise<AvatarChoice>;
  /** The renderer's `prepare()`; settled at once for an avatar service. */
  ready: Promise<void>;
}

export interface AvatarOptions {
  room: Room;
  prepared: PreparedAvatar;
  /** Called once with `performance.now()` when the first frame went out (billing starts there). */
  onFirstFrame(atMs: number): void;
  /** The identity's avatar service could not start; our own face streams instead (the session's record says so). */
  onFallback?(report: Omit<AvatarFallbackReport, 'type'>): void;
  /**
   * A recorded session: our frames and speech go to it tick by tick; with an avatar service
   * (whose frames we do not hold) it records audio only, the service's voice from the room.
   */
  recorder?: SessionRecorder;
}

export interface Avatar {
  /** The agent session's audio output. */
  speech: voice.AudioOutput;
  /**
   * Settles once the visitor can hear the speech (subscribed to it): the greeting waits for
   * it, or its first words are lost. An avatar service's output waits for the service itself.
   */
  audible: Promise<void>;
  /** The visitor started or stopped speaking: a drawn face nods at their pauses (a service ignores it). */
  visitorSpeaking(speaking: boolean): void;
  /** Frames published while watched, and for how long, for a face drawn here; absent for a voice alone or an avatar service. */
  videoTally?(): VideoTally;
  /** LiveKit's ids of the tracks this job published (none for an avatar service, which publishes its own). */
  trackSids(): string[];
  stop(): Promise<void>;
}

/**
 * Chooses the identity's avatar and starts loading its face (fetching and decoding the
 * trained portrait takes about 150 ms) while the job is still connecting to the room.
 */
export function prepareAvatar(plan: AvatarPlan): PreparedAvatar {
  const choice = chooseAvatar({ identity: plan.identity, size: avatarFrameSize(plan.shape), logger: plan.logger });
  const ready = choice.then((chosen) => (chosen.kind === 'renderer' ? chosen.renderer.prepare() : undefined));
  // Awaited by startAvatar; a job that never gets there (its room is gone) must not crash on it.
  ready.catch(() => undefined);
  return { ...plan, choice, ready };
}

/**
 * Starts the prepared avatar in the room. Drawn here: publishes its tracks and resolves once
 * the first frame is out. An avatar service: resolves once the service accepted; it joins by itself.
 */
export async function startAvatar(options: AvatarOptions): Promise<Avatar> {
  const { prepared } = options;
  const size = avatarFrameSize(prepared.shape);
  const choice = await prepared.choice;
  let renderer: AvatarRenderer;
  let ready = prepared.ready;
  if (choice.kind === 'service') {
    try {
      const service = await startAvatarService({
        room: options.room,
        identity: prepared.identity,
        shape: prepared.shape,
        pipeline: choice.pipeline,
        onFirstFrame: options.onFirstFrame,
        logger: prepared.logger,
      });
      const agentIdentity = options.room.localParticipant!.identity;
      options.recorder?.followSpeaker(
        options.room,
        (participant) => participant.attributes[PUBLISH_ON_BEHALF] === agentIdentity,
      );
      return { ...service, audible: Promise.resolve(), visitorSpeaking: () => {}, trackSids: () => [] };
    } catch (error) {
      // The conversation goes on with our own face rather than without one.
      renderer = fallbackRenderer({ identity: prepared.identity, size, logger: prepared.logger });
      const fallback = renderer instanceof StandinRenderer ? 'standin' : 'builtin';
      prepared.logger.warn(
        { pipeline_id: choice.pipeline.id, fallback, err: error },
        'the avatar service could not start; streaming our own face',
      );
      options.onFallback?.({ pipeline_id: choice.pipeline.id, fallback, reason: String(error).slice(0, 500) });
      ready = renderer.prepare();
    }
  } else {
    renderer = choice.renderer;
  }
  return runOwnOutput({
    room: options.room,
    renderer,
    rendererReady: ready,
    onFirstFrame: options.onFirstFrame,
    logger: prepared.logger,
    testMark: prepared.test,
    recorder: options.recorder,
  });
}

/** A session without an avatar: the agent's voice alone, paced and published the same way. */
export async function startVoice(options: {
  room: Room;
  logger: AgentLogger;
  /** A recorded session: audio only, the speech tick by tick. */
  recorder?: SessionRecorder;
}): Promise<Avatar> {
  return runOwnOutput({
    room: options.room,
    renderer: null,
    rendererReady: Promise.resolve(),
    onFirstFrame: () => {},
    logger: options.logger,
    recorder: options.recorder,
  });
}

/** Our own output, a drawn face or (renderer null) the voice alone: the runner started, its controls handed out. */
async function runOwnOutput(options: Omit<AvatarRunnerOptions, 'speech'>): Promise<Avatar> {
  const speech = new AvatarSpeech();
  const runner = new AvatarRunner({ ...options, speech });
  await runner.start();
  const avatar: Avatar = {
    speech,
    audible: runner.audible,
    // Without a face nothing reads it: the runner hands it to the renderer only.
    visitorSpeaking: (speaking) => runner.setVisitorSpeaking(speaking),
    trackSids: () => runner.trackSids,
    stop: () => runner.stop(),
  };
  if (options.renderer) avatar.videoTally = () => runner.videoTally;
  return avatar;
}
