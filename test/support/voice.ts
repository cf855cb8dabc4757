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

/**
 * Silence a quiet microphone still sends after speech (ms), as a browser's Opus DTX keeps
 * sending for a moment before it goes quiet.
 */
const QUIET_AFTER_MS = 200;

/**
 * A published microphone that sends silence until told to speak; or, `quiet`, nothing but
 * its speech and a short tail.
 */
export class Microphone {
  readonly #source: AudioSource;
  #queue: { samples: Int16Array; offset: number; done: (span: SpokenSpan) => void; startedAt?: number }[] = [];
  #stopped = false;
  #running: Promise<void> = Promise.resolve();
  /** Wakes a quiet microphone's loop when there is something to say, or it stops. */
  #wake: (() => void) | undefined;

  /** Samples per captured frame: 10 ms unless `frameMs` says (each frame is one call into rtc-node). */
  #frameSamples = FRAME_SAMPLES;

  private constructor(quiet: boolean) {
    // A quiet microphone hands over 10 ms frames straight to the encoder (no queue): between
    // utterances nothing is encoded at all. A queued source pads with silence on its own.
    this.#source = new AudioSource(MIC_RATE, 1, quiet ? 0 : 50);
  }

  /**
   * `frameMs`: the size of each captured frame (10 ms by default; a browser sends 20 ms
   * packets). `quiet`: send only speech and a short tail (a benchmark's visitors, whose
   * encoding would otherwise load the machine they measure).
   */
  static async publish(
    room: Room,
    { frameMs, quiet = false }: { frameMs?: number; quiet?: boolean } = {},
  ): Promise<Microphone> {
    const microphone = new Microphone(quiet);
    if (frameMs) microphone.#frameSamples = (MIC_RATE * frameMs) / 1000;
    const track = LocalAudioTrack.createAudioTrack('microphone', microphone.#source);
    await room.localParticipant!.publishTrack(
      track,
      new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE }),
    );
    microphone.#running = quiet ? microphone.#runQuiet() : microphone.#run();
    return microphone;
  }

  /** Speaks `samples`; resolves when the last of them was sent, with when speech started and ended (performance.now()). */
  say(samples: Int16Array): Promise<SpokenSpan> {
    return new Promise((done) => {
      this.#queue.push({ samples, offset: 0, done });
      this.#wake?.();
    });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    await this.#running;
    await this.#source.close();
  }

  /** The next frame: the current utterance's next samples, or silence; and what to call once it was sent. */
  #nextFrame(silence: Int16Array): { frame: Int16Array; finished?: () => void } {
    const current = this.#queue[0];
    if (!current) return { frame: silence };
    // The frame leaves after what is already queued.
    current.startedAt ??= performance.now() + this.#source.queuedDuration;
    const frame = new Int16Array(this.#frameSamples);
    const n = Math.min(this.#frameSamples, current.samples.length - current.offset);
    frame.set(current.samples.subarray(current.offset, current.offset + n));
    current.offset += n;
    if (current.offset < current.samples.length) return { frame };
    this.#queue.shift();
    return {
      frame,
      finished: () =>
        current.done({ startedAt: current.startedAt!, endedAt: performance.now() + this.#source.queuedDuration }),
    };
  }

  /**
   * One frame at a time, each awaited: the source's 50 ms queue paces the loop in real time,
   * as a sound card would, and a late timer on a loaded machine can never hand frames over
   * in a burst whose order the native side does not promise.
   */
  async #run(): Promise<void> {
    const silence = new Int16Array(this.#frameSamples);
    while (!this.#stopped) {
      const { frame, finished } = this.#nextFrame(silence);
      await this.#source.captureFrame(new AudioFrame(frame, MIC_RATE, 1, this.#frameSamples));
      finished?.();
    }
  }

  /** Paced by a clock (a direct source does not pace), 10 ms at a time; asleep between utterances. */
  async #runQuiet(): Promise<void> {
    const silence = new Int16Array(this.#frameSamples);
    const frameMs = (this.#frameSamples / MIC_RATE) * 1000;
    const tenMs = MIC_RATE / 100;
    while (!this.#stopped) {
      if (this.#queue.length === 0) {
        await new Promise<void>((resolve) => (this.#wake = resolve));
        this.#wake = undefined;
        continue;
      }
      const from = performance.now();
      let quietSince: number | undefined;
      for (let k = 0; !this.#stopped; k++) {
        const wait = from + k * frameMs - performance.now();
        if (wait > 0) await Bun.sleep(wait);
        const { frame, finished } = this.#nextFrame(silence);
        for (let at = 0; at < frame.length; at += tenMs)
          await this.#source.captureFrame(new AudioFrame(frame.slice(at, at + tenMs), MIC_RATE, 1, tenMs));
        finished?.();
        if (this.#queue.length > 0) quietSince = undefined;
        else if ((quietSince ??= performance.now()) + QUIET_AFTER_MS <= performance.now()) break;
      }
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
