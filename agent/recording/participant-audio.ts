// A participant's voice for the recording: the visitor's microphone (or the avatar service's
// voice, which carries the agent's speech when we draw no face), read through its own
// AudioStream at the recording's rate, mono, into an AudioFifo. The job connects with
// AutoSubscribe.AUDIO_ONLY, so the track is subscribed already (the conversation hears the
// same one); this only reads it, and follows the participant leaving and coming back. Room
// events only: no stream or RPC handler is registered (agent/room-inputs.ts).
import {
  type AudioFrame,
  AudioStream,
  type RemoteParticipant,
  type RemoteTrack,
  type RemoteTrackPublication,
  type Room,
  RoomEvent,
  TrackKind,
  type TrackSource,
} from '@livekit/rtc-node';
import { AVATAR_SAMPLE_RATE } from '../../src/contract/index.ts';
import type { AgentLogger } from '../logging.ts';
import { AudioFifo, type AudioTake } from './audio-fifo.ts';

/** A second of voice at most waits to be mixed: beyond it the oldest goes (a stalled loop). */
const MAX_QUEUED_MS = 1_000;
/** Held back before mixing (AudioFifo's cushion): a few network frames' jitter. */
const CUSHION_MS = 60;

export interface ParticipantAudioOptions {
  room: Room;
  /** Whose voice: the visitor (by identity), or the participant publishing for the agent. */
  speaker: (participant: RemoteParticipant) => boolean;
  /** Only this track source (the visitor's microphone); absent: any audio track of the participant. */
  source?: TrackSource;
  logger: Pick<AgentLogger, 'warn'>;
}

export class ParticipantAudio implements AudioTake {
  readonly #options: ParticipantAudioOptions;
  readonly #fifo = new AudioFifo({
    maxSamples: (AVATAR_SAMPLE_RATE * MAX_QUEUED_MS) / 1000,
    cushionSamples: (AVATAR_SAMPLE_RATE * CUSHION_MS) / 1000,
  });
  #reader: ReadableStreamDefaultReader<AudioFrame> | undefined;
  #readingSid: string | undefined;
  #closed = false;

  constructor(options: ParticipantAudioOptions) {
    this.#options = options;
  }

  /** Reads the track now if it is subscribed already, and whenever it is (re)subscribed. */
  start(): void {
    const { room } = this.#options;
    room.on(RoomEvent.TrackSubscribed, this.#onSubscribed);
    room.on(RoomEvent.TrackUnsubscribed, this.#onUnsubscribed);
    for (const participant of room.remoteParticipants.values()) {
      for (const publication of participant.trackPublications.values()) {
        if (publication.track && this.#matches(publication, participant))
          this.#onSubscribed(publication.track, publication, participant);
      }
    }
  }

  take(count: number): Int16Array {
    return this.#fifo.take(count);
  }

  clear(): void {
    this.#fifo.clear();
  }

  close(): void {
    this.#closed = true;
    const { room } = this.#options;
    room.off(RoomEvent.TrackSubscribed, this.#onSubscribed);
    room.off(RoomEvent.TrackUnsubscribed, this.#onUnsubscribed);
    this.#stopReading();
    this.#fifo.clear();
  }

  #matches(publication: RemoteTrackPublication, participant: RemoteParticipant): boolean {
    const { speaker, source } = this.#options;
    return (
      speaker(participant) &&
      publication.kind === TrackKind.KIND_AUDIO &&
      (source === undefined || publication.source === source)
    );
  }

  #onSubscribed = (track: RemoteTrack, publication: RemoteTrackPublication, participant: RemoteParticipant): void => {
    if (this.#closed || !this.#matches(publication, participant)) return;
    this.#stopReading();
    // Mono at the avatar's rate: LiveKit's own resampler does the work, the mix only adds.
    const reader = new AudioStream(track, { sampleRate: AVATAR_SAMPLE_RATE, numChannels: 1 }).getReader();
    this.#reader = reader;
    this.#readingSid = publication.sid;
    void this.#read(reader);
  };

  #onUnsubscribed = (
    _track: RemoteTrack,
    publication: RemoteTrackPublication,
    participant: RemoteParticipant,
  ): void => {
    if (this.#matches(publication, participant) && publication.sid === this.#readingSid) this.#stopReading();
  };

  #stopReading(): void {
    void this.#reader?.cancel().catch(() => undefined);
    this.#reader = undefined;
    this.#readingSid = undefined;
    // What is left of a voice that went away is not replayed when it comes back.
    this.#fifo.clear();
  }

  async #read(reader: ReadableStreamDefaultReader<AudioFrame>): Promise<void> {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done || this.#closed || reader !== this.#reader) break;
        this.#fifo.push(value.data);
      }
    } catch (error) {
      if (!this.#closed && reader === this.#reader)
        this.#options.logger.warn({ err: error }, 'a voice for the recording could not be read');
    }
  }
}
