// A visitor's mouth and ears for conversation tests: speech synthesised by espeak-ng and
// spoken into a real microphone track in real time (silence in between, as a live
// microphone sends), and the agent's audio track listened to as a loudness timeline.
import { AudioFrame, AudioSource, AudioStream, LocalAudioTrack, TrackPublishOptions, TrackSource, type RemoteTrack, type Room } from '@livekit/rtc-node';
import { espeak } from './fakes/speech.ts';

export const MIC_RATE = 48_000;
const FRAME_SAMPLES = MIC_RATE / 100; // 10 ms

const spoken = new Map<string, Int16Array>();

/** `text` spoken by espeak-ng, as 48 kHz mono PCM (cached per phrase). */
export async function speech(text: string, options: { voice?: string; wordsPerMinute?: number } = {}): Promise<Int16Array> {
  const key = `${options.voice}|${options.wordsPerMinute}|${text}`;
  const cached = spoken.get(key);
  if (cached) return cached;
  const { samples } = await espeak(text, { voice: options.voice ?? 'en-us', wordsPerMinute: options.wordsPerMinute ?? 150, sampleRate: MIC_RATE });
  spoken.set(key, samples);
  return samples;
}

/** A published microphone that sends silence until told to speak. */
export class Microphone {
  readonly #source = new AudioSource(MIC_RATE, 1, 50);
  #queue: { samples: Int16Array; offset: number; done: (span: SpokenSpan) => void; startedAt?: number }[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #startedAt = 0;
  #sent = 0;
  #stopped = false;

  static async publish(room: Room): Promise<Microphone> {
    const microphone = new Microphone();
    const track = LocalAudioTrack.createAudioTrack('microphone', microphone.#source);
    await room.localParticipant!.publishTrack(track, new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE }));
    microphone.#startedAt = performance.now();
    microphone.#tick();
    return microphone;
  }

  /** Speaks `samples`; resolves when the last of them was sent, with when speech started and ended (performance.now()). */
  say(samples: Int16Array): Promise<SpokenSpan> {
    return new Promise((done) => this.#queue.push({ samples, offset: 0, done }));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#source.close();
  }

  #tick = (): void => {
    if (this.#stopped) return;
    // Frames go out on a 10 ms grid from the start; a late timer sends the missed ones at once.
    while (this.#sent * 10 <= performance.now() - this.#startedAt) {
      const frame = new Int16Array(FRAME_SAMPLES);
      const current = this.#queue[0];
      if (current) {
        current.startedAt ??= performance.now();
        const n = Math.min(FRAME_SAMPLES, current.samples.length - current.offset);
        frame.set(current.samples.subarray(current.offset, current.offset + n));
        current.offset += n;
        if (current.offset >= current.samples.length) {
          this.#queue.shift();
          current.done({ startedAt: current.startedAt, endedAt: performance.now() });
        }
      }
      void this.#source.captureFrame(new AudioFrame(frame, MIC_RATE, 1, FRAME_SAMPLES)).catch(() => undefined);
      this.#sent++;
    }
    this.#timer = setTimeout(this.#tick, 5);
  };
}

export interface SpokenSpan {
  startedAt: number;
  endedAt: number;
}

/** Loudness of a remote audio track every 10 ms, stamped with performance.now() on arrival. */
export class Listener {
  readonly levels: { at: number; rms: number }[] = [];
  #reader: ReadableStreamDefaultReader<AudioFrame>;

  constructor(track: RemoteTrack) {
    this.#reader = new AudioStream(track, { sampleRate: MIC_RATE, numChannels: 1 }).getReader();
    void this.#read();
  }

  async #read(): Promise<void> {
    for (;;) {
      const { done, value } = await this.#reader.read().catch(() => ({ done: true, value: undefined }));
      if (done || !value) return;
      let sum = 0;
      for (const sample of value.data) sum += sample * sample;
      this.levels.push({ at: performance.now(), rms: Math.sqrt(sum / Math.max(1, value.data.length)) });
    }
  }

  /** The first moment after `after` with sound louder than `threshold`. */
  soundAfter(after: number, threshold = 300): number | undefined {
    return this.levels.find((level) => level.at > after && level.rms > threshold)?.at;
  }

  /** The last moment after `after` with sound, once `quietMs` of silence followed it (undefined while still sounding). */
  silenceAfter(after: number, quietMs = 300, threshold = 300): number | undefined {
    let lastLoud: number | undefined;
    for (const level of this.levels) {
      if (level.at <= after) continue;
      if (level.rms > threshold) lastLoud = level.at;
      else if (lastLoud !== undefined && level.at - lastLoud >= quietMs) return lastLoud;
    }
    const newest = this.levels.at(-1);
    if (lastLoud === undefined && newest && newest.at - after >= quietMs) return after;
    return undefined;
  }

  close(): void {
    void this.#reader.cancel().catch(() => undefined);
  }
}
