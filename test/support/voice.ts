// A visitor's mouth and ears for conversation tests: speech synthesised by espeak-ng and
// spoken into a real microphone track in real time (silence in between, as a live
// microphone sends), and the agent's audio track listened to as a loudness timeline.

import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  AudioFrame,
  AudioSource,
  AudioStream,
  LocalAudioTrack,
  type RemoteTrack,
  type Room,
  TrackPublishOptions,
  TrackSource,
} from '@livekit/rtc-node';
import { loadProviders } from '../../src/config.ts';
import { espeak, type Pcm, parseWav, resample } from './fakes/speech.ts';

export const MIC_RATE = 48_000;
const FRAME_SAMPLES = MIC_RATE / 100; // 10 ms

const spoken = new Map<string, Int16Array>();

/**
 * `text` spoken as 48 kHz mono PCM (cached per phrase): by espeak-ng, or with `voice: 'piper'`
 * by the Piper voice the bootstrap installs, a recorded human's voice. Whisper tiny.en hears
 * espeak-ng's robot well from a file, but through Opus on a loaded machine it misheard it one
 * turn in a few ("winner" for "weather"); a human-sounding visitor is what it is built for.
 */
export async function speech(
  text: string,
  options: { voice?: string; wordsPerMinute?: number } = {},
): Promise<Int16Array> {
  const key = `${options.voice}|${options.wordsPerMinute}|${text}`;
  const cached = spoken.get(key);
  if (cached) return cached;
  const { samples } =
    options.voice === 'piper'
      ? await piper(text, MIC_RATE)
      : await espeak(text, {
          voice: options.voice ?? 'en-us',
          wordsPerMinute: options.wordsPerMinute ?? 150,
          sampleRate: MIC_RATE,
        });
  spoken.set(key, samples);
  return samples;
}

/** `text` spoken by the offline Piper voice, with the models venv's `piper` command. */
async function piper(text: string, sampleRate: number): Promise<Pcm> {
  const modelsDir = loadProviders(process.env).modelsDir;
  const manifest = JSON.parse(await readFile(join(modelsDir, 'manifest.json'), 'utf8')) as {
    python: string;
    piper: { model: string };
  };
  const out = join(tmpdir(), `likeness-piper-${process.pid}-${spoken.size}.wav`);
  const proc = Bun.spawn(
    [join(modelsDir, dirname(manifest.python), 'piper'), '-m', join(modelsDir, manifest.piper.model), '-f', out],
    {
      stdin: new TextEncoder().encode(text),
      stdout: 'ignore',
      stderr: 'pipe',
    },
  );
  const [err, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`piper failed (${code}): ${err}`);
  try {
    return resample(parseWav(await readFile(out)), sampleRate);
  } finally {
    await rm(out, { force: true });
  }
}

/** A published microphone that sends silence until told to speak. */
export class Microphone {
  readonly #source = new AudioSource(MIC_RATE, 1, 50);
  #queue: { samples: Int16Array; offset: number; done: (span: SpokenSpan) => void; startedAt?: number }[] = [];
  #stopped = false;
  #running: Promise<void> = Promise.resolve();

  /** Samples per captured frame: 10 ms unless `frameMs` says (each frame is one call into rtc-node). */
  #frameSamples = FRAME_SAMPLES;

  /** `frameMs`: the size of each captured frame (10 ms by default; a browser sends 20 ms packets). */
  static async publish(room: Room, { frameMs }: { frameMs?: number } = {}): Promise<Microphone> {
    const microphone = new Microphone();
    if (frameMs) microphone.#frameSamples = (MIC_RATE * frameMs) / 1000;
    const track = LocalAudioTrack.createAudioTrack('microphone', microphone.#source);
    await room.localParticipant!.publishTrack(
      track,
      new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE }),
    );
    microphone.#running = microphone.#run();
    return microphone;
  }

  /** Speaks `samples`; resolves when the last of them was sent, with when speech started and ended (performance.now()). */
  say(samples: Int16Array): Promise<SpokenSpan> {
    return new Promise((done) => this.#queue.push({ samples, offset: 0, done }));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#running;
    await this.#source.close();
  }

  /**
   * One frame at a time, each awaited: the source's 50 ms queue paces the loop in real time,
   * as a sound card would, and a late timer on a loaded machine can never hand frames over
   * in a burst whose order the native side does not promise.
   */
  async #run(): Promise<void> {
    const silence = new Int16Array(this.#frameSamples);
    while (!this.#stopped) {
      let frame = silence;
      let finished: (() => void) | undefined;
      const current = this.#queue[0];
      if (current) {
        // The frame leaves after what is already queued.
        current.startedAt ??= performance.now() + this.#source.queuedDuration;
        frame = new Int16Array(this.#frameSamples);
        const n = Math.min(this.#frameSamples, current.samples.length - current.offset);
        frame.set(current.samples.subarray(current.offset, current.offset + n));
        current.offset += n;
        if (current.offset >= current.samples.length) {
          this.#queue.shift();
          finished = () =>
            current.done({ startedAt: current.startedAt!, endedAt: performance.now() + this.#source.queuedDuration });
        }
      }
      await this.#source.captureFrame(new AudioFrame(frame, MIC_RATE, 1, this.#frameSamples));
      finished?.();
    }
  }
}

export interface SpokenSpan {
  startedAt: number;
  endedAt: number;
}

/** Loudness of a remote audio track every 10 ms, stamped with performance.now() on arrival. */
export class Listener {
  /** Each frame's arrival, loudness and length of audio (ms). */
  readonly levels: { at: number; rms: number; ms: number }[] = [];
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
      this.levels.push({
        at: performance.now(),
        rms: Math.sqrt(sum / Math.max(1, value.data.length)),
        ms: (value.samplesPerChannel / value.sampleRate) * 1000,
      });
    }
  }

  /** The first moment after `after` with sound louder than `threshold`. */
  soundAfter(after: number, threshold = 300): number | undefined {
    return this.levels.find((level) => level.at > after && level.rms > threshold)?.at;
  }

  /**
   * The last moment after `after` with sound, once `quietMs` of silence followed it (undefined
   * while still sounding). The silence is counted in audio received, not in time since: a
   * visitor whose own process stalls gets the next words late, not as a pause (beside a CPU hog
   * a 600 ms stall in arrivals read as the end of a sentence 2.3 s into it).
   */
  silenceAfter(after: number, quietMs = 300, threshold = 300): number | undefined {
    let lastLoud: number | undefined;
    let quiet = 0;
    for (const level of this.levels) {
      if (level.at <= after) continue;
      if (level.rms > threshold) {
        lastLoud = level.at;
        quiet = 0;
        continue;
      }
      quiet += level.ms;
      if (lastLoud !== undefined && quiet >= quietMs) return lastLoud;
    }
    return lastLoud === undefined && quiet >= quietMs ? after : undefined;
  }

  close(): void {
    void this.#reader.cancel().catch(() => undefined);
  }
}
