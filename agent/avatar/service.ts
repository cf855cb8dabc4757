// An avatar served by a separate participant (a pipeline of kind `service`): the job mints
// it a token that publishes on the agent's behalf, asks the service to join, and streams the
// agent's speech to it with agents' own `DataStreamAudioOutput` (`lk.audio_stream`,
// `lk.clear_buffer`, `lk.playback_finished`). The job then publishes nothing itself: the
// service's audio and video are the avatar.
import { getJobContext, voice } from '@livekit/agents';
import {
  type RemoteParticipant,
  type RemoteTrackPublication,
  type Room,
  RoomEvent,
  TrackKind,
} from '@livekit/rtc-node';
import { AccessToken, RoomServiceClient } from 'livekit-server-sdk';
import {
  AVATAR_SAMPLE_RATE,
  type AvatarShape,
  type DispatchIdentity,
  PUBLISH_ON_BEHALF,
} from '../../src/contract/index.ts';
import type { AgentLogger } from '../logging.ts';
import type { AvatarServicePipeline } from '../pipelines/index.ts';

/** The avatar participant's token outlives any session (SESSION_MAX_DURATION_SECONDS caps those). */
const AVATAR_TOKEN_TTL_SECONDS = 6 * 60 * 60;
/** A service that has not accepted by then is given up on (the session falls back to the stand-in). */
const SERVICE_START_TIMEOUT_MS = 15_000;

export interface AvatarServiceOptions {
  room: Room;
  pipeline: AvatarServicePipeline;
  identity: DispatchIdentity | null;
  shape: AvatarShape;
  onFirstFrame(atMs: number): void;
  logger: Pick<AgentLogger, 'warn'>;
}

/** The avatar service's own way into the room: it publishes as the agent's avatar. */
function avatarToken(o: {
  apiKey: string;
  apiSecret: string;
  roomName: string;
  avatarParticipantIdentity: string;
  agentParticipantIdentity: string;
}): Promise<string> {
  const token = new AccessToken(o.apiKey, o.apiSecret, {
    identity: o.avatarParticipantIdentity,
    name: 'avatar',
    ttl: AVATAR_TOKEN_TTL_SECONDS,
    attributes: { [PUBLISH_ON_BEHALF]: o.agentParticipantIdentity },
  });
  // An agent participant: clients and the session treat it as the agent's, not as a visitor.
  token.kind = 'agent';
  token.addGrant({ room: o.roomName, roomJoin: true, canPublish: true, canSubscribe: true, canPublishData: true });
  return token.toJwt();
}

export async function startAvatarService(
  options: AvatarServiceOptions,
): Promise<{ speech: voice.AudioOutput; stop(): Promise<void> }> {
  const { room, pipeline } = options;
  const job = getJobContext();
  const { url, apiKey, apiSecret } = job.info;
  if (!apiKey || !apiSecret) throw new Error('the avatar service needs the worker’s LiveKit API key and secret');
  const agentParticipantIdentity = room.localParticipant!.identity;
  const avatarParticipantIdentity = `avatar-${pipeline.id}-${agentParticipantIdentity}`.slice(0, 128);
  const roomName = room.name!;

  // The avatar streams from its first published video (billing starts there, as with our own frames).
  let firstFrameSeen = false;
  const onPublished = (publication: RemoteTrackPublication, participant: RemoteParticipant) => {
    if (
      firstFrameSeen ||
      participant.identity !== avatarParticipantIdentity ||
      publication.kind !== TrackKind.KIND_VIDEO
    )
      return;
    firstFrameSeen = true;
    room.off(RoomEvent.TrackPublished, onPublished);
    options.onFirstFrame(performance.now());
  };
  room.on(RoomEvent.TrackPublished, onPublished);

  const sampleRate = pipeline.sampleRate ?? AVATAR_SAMPLE_RATE;
  const starting = pipeline.start({
    livekitUrl: url,
    roomName,
    token: await avatarToken({ apiKey, apiSecret, roomName, avatarParticipantIdentity, agentParticipantIdentity }),
    avatarParticipantIdentity,
    agentParticipantIdentity,
    identity: options.identity,
    shape: options.shape,
    sampleRate,
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const session = await Promise.race([
    starting,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        // Accepted too late: closed again, so it does not stream into a room that gave up on it.
        void starting.then((late) => late.close()).catch(() => undefined);
        reject(new Error(`the avatar service did not accept within ${SERVICE_START_TIMEOUT_MS} ms`));
      }, SERVICE_START_TIMEOUT_MS);
    }),
  ])
    .catch((error: unknown) => {
      room.off(RoomEvent.TrackPublished, onPublished);
      throw error;
    })
    .finally(() => clearTimeout(timer));
  // Speech waits for the avatar to be in the room with its video (agents' default for avatar plugins).
  const speech = new voice.DataStreamAudioOutput({
    room,
    destinationIdentity: avatarParticipantIdentity,
    sampleRate,
    waitRemoteTrack: TrackKind.KIND_VIDEO,
  });

  let stopped = false;
  return {
    speech,
    async stop() {
      if (stopped) return;
      stopped = true;
      room.off(RoomEvent.TrackPublished, onPublished);
      await session
        .close()
        .catch((error: unknown) => options.logger.warn({ err: error }, 'the avatar service did not close cleanly'));
      // The participant goes with the session even if the service does not leave by itself.
      await new RoomServiceClient(url, apiKey, apiSecret)
        .removeParticipant(roomName, avatarParticipantIdentity)
        .catch(() => undefined);
    },
  };
}
