// Visual awareness (issue 4 item 6): frames of the visitor's camera, sampled only while
// they speak (about one a second, the latest few kept), go with their turn to the language
// model as images. Without visual awareness the job never subscribes to video at all.
import {
  type RemoteParticipant,
  type RemoteTrack,
  type RemoteTrackPublication,
  type Room,
  RoomEvent,
  TrackKind,
  TrackSource,
  VideoBufferType,
  type VideoFrame,
  type VideoFrameEvent,
  VideoStream,
} from '@livekit/rtc-node';
import sharp from 'sharp';
import type { AgentLogger } from '../logging.ts';

/**
 * Whether the session's model is shown the visitor's camera: with visual awareness, unless the
 * model is the offline one, which reads text only (its frames would be sampled for nothing, and
 * a reply could not be prepared before the turn's end for images it never reads).
 */
export function modelSeesCamera(visualAwareness: boolean, llmName: string): boolean {
  return visualAwareness && llmName !== 'offline';
}

export interface CameraSamplerOptions {
  room: Room;
  /** Only the visitor's camera is looked at. */
  visitorIdentity: string;
  /** Minimum time between two kept frames. */
  intervalMs?: number;
  /** Frames kept for one turn; older ones are dropped. */
  maxFrames?: number;
  logger: Pick<AgentLogger, 'warn'>;
}

export class CameraSampler {
  readonly #options: Required<Omit<CameraSamplerOptions, 'logger'>> & Pick<CameraSamplerOptions, 'logger'>;
  #speaking = false;
  /** JPEG data URLs, oldest first. */
  #frames: string[] = [];
  #encoding = 0;
  #lastSampleAt = -Infinity;
  #reader: ReadableStreamDefaultReader<VideoFrameEvent> | undefined;
  #closed = false;

  constructor(options: CameraSamplerOptions) {
    this.#options = { intervalMs: 1_000, maxFrames: 3, ...options };
  }

  /** Subscribes to the visitor's camera now and whenever it is (re)published. */
  start(): void {
    const { room } = this.#options;
    room.on(RoomEvent.TrackPublished, this.#onPublished);
    room.on(RoomEvent.TrackSubscribed, this.#onSubscribed);
    room.on(RoomEvent.TrackUnpublished, this.#onUnpublished);
    for (const participant of room.remoteParticipants.values()) {
      for (const publication of participant.trackPublications.values()) this.#onPublished(publication, participant);
    }
  }

  /** The session says when the visitor starts and stops speaking: frames are kept only in between. */
  setSpeaking(speaking: boolean): void {
    this.#speaking = speaking;
    if (speaking) this.#lastSampleAt = -Infinity; // the first frame of an utterance is kept at once
  }

  /** The frames sampled since the last call, oldest first, as JPEG data URLs. */
  async takeFrames(): Promise<string[]> {
    // A frame sampled at the very end of the utterance may still be encoding.
    for (let waited = 0; this.#encoding > 0 && waited < 200; waited += 10) await Bun.sleep(10);
    const frames = this.#frames;
    this.#frames = [];
    return frames;
  }

  close(): void {
    this.#closed = true;
    const { room } = this.#options;
    room.off(RoomEvent.TrackPublished, this.#onPublished);
    room.off(RoomEvent.TrackSubscribed, this.#onSubscribed);
    room.off(RoomEvent.TrackUnpublished, this.#onUnpublished);
    this.#stopReading();
    this.#frames = [];
  }

  #isVisitorCamera(publication: RemoteTrackPublication, participant: RemoteParticipant): boolean {
    return (
      participant.identity === this.#options.visitorIdentity &&
      publication.kind === TrackKind.KIND_VIDEO &&
      publication.source === TrackSource.SOURCE_CAMERA
    );
  }

  #onPublished = (publication: RemoteTrackPublication, participant: RemoteParticipant): void => {
    if (this.#isVisitorCamera(publication, participant) && !publication.subscribed) publication.setSubscribed(true);
  };

  #onUnpublished = (publication: RemoteTrackPublication, participant: RemoteParticipant): void => {
    if (this.#isVisitorCamera(publication, participant)) this.#stopReading();
  };

  #onSubscribed = (track: RemoteTrack, publication: RemoteTrackPublication, participant: RemoteParticipant): void => {
    if (!this.#isVisitorCamera(publication, participant)) return;
    this.#stopReading();
    const reader = new VideoStream(track).getReader();
    this.#reader = reader;
    void this.#read(reader);
  };

  #stopReading(): void {
    void this.#reader?.cancel().catch(() => undefined);
    this.#reader = undefined;
  }

  async #keep(frame: VideoFrame): Promise<void> {
    this.#encoding++;
    try {
      const jpeg = await toJpegDataUrl(frame);
      if (this.#closed) return;
      this.#frames.push(jpeg);
      if (this.#frames.length > this.#options.maxFrames) this.#frames.shift();
    } catch (error) {
      this.#options.logger.warn({ err: error }, 'a camera frame could not be encoded');
    } finally {
      this.#encoding--;
    }
  }

  async #read(reader: ReadableStreamDefaultReader<VideoFrameEvent>): Promise<void> {
    try {
      for (;;) {
        const { done, value: event } = await reader.read();
        if (done || this.#closed || reader !== this.#reader) break;
        if (!this.#speaking) continue;
        const now = performance.now();
        if (now - this.#lastSampleAt < this.#options.intervalMs) continue;
        this.#lastSampleAt = now;
        void this.#keep(event.frame);
      }
    } catch (error) {
      if (!this.#closed) this.#options.logger.warn({ err: error }, "the visitor's camera could not be read");
    }
  }
}

/** Long side of the images sent: enough for the model to see the scene, light on the request. */
const IMAGE_LONG_SIDE = 768;

async function toJpegDataUrl(frame: VideoFrame): Promise<string> {
  const rgba = frame.type === VideoBufferType.RGBA ? frame : frame.convert(VideoBufferType.RGBA);
  const jpeg = await sharp(rgba.data, { raw: { width: rgba.width, height: rgba.height, channels: 4 } })
    .resize(IMAGE_LONG_SIDE, IMAGE_LONG_SIDE, { fit: 'inside', withoutEnlargement: true })
    .jpeg({ quality: 80 })
    .toBuffer();
  return `data:image/jpeg;base64,${jpeg.toString('base64')}`;
}
