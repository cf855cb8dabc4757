// The Talk page's side of a session room (livekit-client): join with the microphone on, play
// only the avatar's picture and voice, and report transcript segments, notices, the
// connection state and whether the session is recorded. The DOM beyond the two media
// elements belongs to the page.
import {
  ConnectionState,
  DisconnectReason,
  type RemoteTrack,
  type RemoteTrackPublication,
  Room,
  RoomEvent,
  type TextStreamReader,
  Track,
} from 'livekit-client';

// The Talk page needs these values but should not know livekit-client beyond this module.
export { ConnectionState, DisconnectReason };

import * as wire from '../../contract/wire-names.ts';

export interface TranscriptSegment {
  /** `lk.segment_id`: later streams with the same id replace the text. */
  id: string;
  fromVisitor: boolean;
  text: string;
  final: boolean;
}

export interface SessionNotice {
  type: 'insufficient_credits' | 'agent_unavailable' | (string & {});
  session_id?: string;
}

export interface TalkRoomEvents {
  connectionState(state: ConnectionState): void;
  transcript(segment: TranscriptSegment): void;
  notice(notice: SessionNotice): void;
  /** The browser refused to start audio without a gesture: offer a button that calls startAudio(). */
  audioBlocked(blocked: boolean): void;
  avatarVideo(present: boolean): void;
  /** The agent's `lk.agent.state`: `listening`, `thinking`, `speaking` (or `initializing`). */
  agentState(state: string): void;
  /** Whether the room's metadata says the session is recorded: on joining, and when it changes. */
  recording(recorded: boolean): void;
  disconnected(reason: DisconnectReason | undefined): void;
}

export class TalkRoom {
  readonly #room = new Room();
  #playingAudio: { track: RemoteTrack; name: string } | null = null;

  constructor(
    private readonly video: HTMLVideoElement,
    private readonly audio: HTMLAudioElement,
    private readonly events: TalkRoomEvents,
  ) {
    const room = this.#room;
    room
      .on(RoomEvent.TrackSubscribed, (track, publication) => this.#attach(track, publication))
      .on(RoomEvent.TrackUnsubscribed, (track, publication) => this.#detach(track, publication))
      .on(RoomEvent.ConnectionStateChanged, (state) => events.connectionState(state))
      .on(RoomEvent.AudioPlaybackStatusChanged, () => events.audioBlocked(!room.canPlaybackAudio))
      .on(RoomEvent.Disconnected, (reason) => {
        this.#detachAll();
        events.disconnected(reason);
      })
      .on(RoomEvent.ParticipantAttributesChanged, (changed, participant) => {
        const state = changed[wire.AGENT_STATE_ATTRIBUTE];
        if (state && participant.isAgent) events.agentState(state);
      })
      .on(RoomEvent.RoomMetadataChanged, (metadata) => events.recording(isRecorded(metadata)))
      .on(RoomEvent.DataReceived, (payload, _participant, _kind, topic) => {
        if (topic !== wire.NOTICE_TOPIC) return;
        try {
          events.notice(JSON.parse(new TextDecoder().decode(payload)) as SessionNotice);
        } catch {
          // not a notice we understand
        }
      });
    room.registerTextStreamHandler(
      wire.TRANSCRIPTION_TOPIC,
      (reader, participant) => void this.#readTranscript(reader, participant.identity),
    );
  }

  /**
   * Connects and turns the microphone on. Throws when the room cannot be joined; a refused
   * microphone is returned as a message instead, since the visitor can still listen.
   */
  async join(rtcUrl: string, token: string): Promise<{ microphoneProblem: string | null }> {
    await this.#room.connect(rtcUrl, token);
    this.events.recording(isRecorded(this.#room.metadata));
    this.events.audioBlocked(!this.#room.canPlaybackAudio);
    try {
      await this.#room.localParticipant.setMicrophoneEnabled(true);
      return { microphoneProblem: null };
    } catch (error) {
      return { microphoneProblem: mediaProblem('microphone', error) };
    }
  }

  /** Returns a message when the camera could not be switched. */
  setCamera(on: boolean): Promise<string | null> {
    return switched('camera', this.#room.localParticipant.setCameraEnabled(on));
  }

  /** Returns a message when the microphone could not be switched. */
  setMicrophone(on: boolean): Promise<string | null> {
    return switched('microphone', this.#room.localParticipant.setMicrophoneEnabled(on));
  }

  /** Must run inside a click handler: browsers allow audio after a user gesture. */
  startAudio(): Promise<void> {
    return this.#room.startAudio();
  }

  async leave(): Promise<void> {
    await this.#room.disconnect();
  }

  #attach(track: RemoteTrack, publication: RemoteTrackPublication): void {
    const name = publication.trackName;
    if (track.kind === Track.Kind.Video && name === wire.AVATAR_VIDEO_TRACK) {
      track.attach(this.video);
      this.events.avatarVideo(true);
      return;
    }
    if (track.kind !== Track.Kind.Audio) return;
    // One voice only: the avatar's when there is one, else the plain agent voice.
    const wanted =
      name === wire.AVATAR_AUDIO_TRACK ||
      (name === wire.VOICE_TRACK && this.#playingAudio?.name !== wire.AVATAR_AUDIO_TRACK);
    if (!wanted) return;
    this.#playingAudio?.track.detach(this.audio);
    track.attach(this.audio);
    this.#playingAudio = { track, name };
  }

  #detach(track: RemoteTrack, publication: RemoteTrackPublication): void {
    track.detach();
    if (this.#playingAudio?.track === track) this.#playingAudio = null;
    if (track.kind === Track.Kind.Video && publication.trackName === wire.AVATAR_VIDEO_TRACK)
      this.events.avatarVideo(false);
  }

  #detachAll(): void {
    this.#playingAudio?.track.detach();
    this.#playingAudio = null;
    this.video.srcObject = null;
    this.audio.srcObject = null;
    this.events.avatarVideo(false);
  }

  /**
   * The agent sends both sides. The visitor's words name the visitor's microphone track in
   * `lk.transcribed_track_id` (the agent also asks for the visitor as sender, but LiveKit
   * may report the agent instead). Each stream carries a segment's whole text so far, at
   * once or as deltas.
   */
  async #readTranscript(reader: TextStreamReader, senderIdentity: string): Promise<void> {
    const attributes = reader.info.attributes ?? {};
    const local = this.#room.localParticipant;
    const fromVisitor =
      senderIdentity === local.identity || local.trackPublications.has(attributes[wire.TRANSCRIBED_TRACK_ID] ?? '');
    const segment: TranscriptSegment = {
      id: attributes[wire.TRANSCRIPTION_SEGMENT_ID] ?? reader.info.id,
      fromVisitor,
      text: '',
      final: attributes[wire.TRANSCRIPTION_FINAL] === 'true',
    };
    try {
      for await (const chunk of reader) {
        segment.text += chunk;
        this.events.transcript({ ...segment });
      }
    } catch {
      // a stream cut off by a disconnect keeps what arrived
    }
    // The agent's delta stream is final once it closes.
    if (!fromVisitor) this.events.transcript({ ...segment, final: true });
  }
}

/** The room's metadata (JSON, src/contract/dispatch.ts SessionRoomMetadata) marks a recorded session. */
export function isRecorded(metadata: string | undefined): boolean {
  try {
    return (JSON.parse(metadata ?? '{}') as Record<string, unknown>)[wire.RECORDING_METADATA_KEY] === true;
  } catch {
    return false; // not our metadata
  }
}

/** null once the device switched, else what went wrong in words. */
function switched(device: 'microphone' | 'camera', switching: Promise<unknown>): Promise<string | null> {
  return switching.then(
    () => null,
    (error) => mediaProblem(device, error),
  );
}

function mediaProblem(device: 'microphone' | 'camera', error: unknown): string {
  const name = error instanceof Error ? error.name : '';
  if (name === 'NotAllowedError')
    return `The browser blocked the ${device}. Allow it in the site settings and try again.`;
  if (name === 'NotFoundError') return `No ${device} was found.`;
  return `The ${device} could not be started: ${error instanceof Error ? error.message : String(error)}`;
}
