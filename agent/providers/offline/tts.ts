// The offline voice as an agents TTS: Piper (en_US joe) for English, espeak-ng for Spanish,
// Polish and Ukrainian. It synthesises one text at a time (no streaming): AgentSession wraps
// it in tts.StreamAdapter, which cuts the reply into sentences, so speech starts after the
// first sentence. Output is always 22 050 Hz mono, the rate of both engines. Both speak in
// the job's speech process (espeak-ng through its library), which tells when each phoneme is
// said: the frames carry those times as viseme cues for the avatar's lips (agent/visemes).
import { spawn } from 'node:child_process';
import { type APIConnectOptions, AudioByteStream, DEFAULT_API_CONNECT_OPTIONS, shortuuid, tts } from '@livekit/agents';
import type { SpokenLanguage } from '../../../src/contract/index.ts';
import { cuesFromPhonemes, cuesWithin, VISEME_CUES, type VisemeCue } from '../../visemes/index.ts';
import type { SpeechServer, SpeechVoice, SpokenChunk } from './speech-server.ts';

export const OFFLINE_TTS_SAMPLE_RATE = 22_050;

/** A voice measured from a sample (identity onboarding): applied to the offline voice. */
export interface OfflineVoiceProfile {
  pitchHz: number;
  wordsPerMinute: number;
}

export interface OfflineTTSOptions {
  language: SpokenLanguage;
  profile: OfflineVoiceProfile | null;
}

/** How one text is spoken. */
export type VoicePlan = SpeechVoice;

/**
 * Sound below this (about −50 dBFS) before a text's first sound is cut: Piper starts each text
 * with 25–65 ms of it and espeak-ng some with up to 55 ms, which the visitor heard as that much
 * more wait before every reply (measured, docs/benchmarks.md).
 */
const LEADING_SILENCE_LEVEL = 100;
/** …keeping this much before the first sound, so its onset is not clipped. */
const LEADING_SILENCE_KEPT_S = 0.005;

/** How many of a text's first samples are silence to cut (0 for a text that is all silence: a pause is kept). */
export function leadingSilence(samples: Int16Array, sampleRate: number): number {
  const first = samples.findIndex((sample) => Math.abs(sample) >= LEADING_SILENCE_LEVEL);
  if (first < 0) return 0;
  return Math.max(0, first - Math.round(sampleRate * LEADING_SILENCE_KEPT_S));
}

/** Measured median F0 and pace of Piper joe at its defaults. */
const PIPER_PITCH_HZ = 95;
const PIPER_WORDS_PER_MINUTE = 200;
/** Beyond this the resampled joe sounds wrong; espeak-ng's voices cover the range instead. */
const PIPER_PITCH_FACTORS = [0.7, 1.6] as const;
const ESPEAK_VOICES: Record<SpokenLanguage, string> = { en: 'en-us', es: 'es', pl: 'pl', uk: 'uk' };
const ESPEAK_DEFAULT_WPM = 160; // a little slower than espeak's 175: clearer
/**
 * espeak-ng's `-p` (0–99) against the median F0 it produced (measured on en-us, es, pl, uk,
 * all within a few Hz): the default male voice, and the `+f3` female variant for higher voices.
 */
const ESPEAK_PITCH: Record<'male' | 'female', [number, number][]> = {
  male: [
    [0, 72],
    [25, 82],
    [50, 100],
    [75, 129],
    [99, 168],
  ],
  female: [
    [0, 141],
    [25, 167],
    [50, 205],
    [75, 259],
    [99, 331],
  ],
};
const FEMALE_FROM_HZ = 150;

const clamp = (value: number, low: number, high: number) => Math.min(high, Math.max(low, value));

/** The `-p` value whose measured F0 is closest to `hz` (linear between calibration points). */
function espeakPitchFor(hz: number, table: [number, number][]): number {
  const first = table[0]!;
  const last = table.at(-1)!;
  if (hz <= first[1]) return first[0];
  if (hz >= last[1]) return last[0];
  for (let i = 1; i < table.length; i++) {
    const [p0, f0] = table[i - 1]!;
    const [p1, f1] = table[i]!;
    if (hz <= f1) return Math.round(p0 + ((hz - f0) / (f1 - f0)) * (p1 - p0));
  }
  return last[0];
}

export function planVoice({ language, profile }: OfflineTTSOptions): VoicePlan {
  if (language === 'en') {
    if (!profile) return { engine: 'piper', lengthScale: 1, pitchFactor: 1 };
    const pitchFactor = profile.pitchHz / PIPER_PITCH_HZ;
    if (pitchFactor >= PIPER_PITCH_FACTORS[0] && pitchFactor <= PIPER_PITCH_FACTORS[1]) {
      return {
        engine: 'piper',
        lengthScale: clamp(PIPER_WORDS_PER_MINUTE / profile.wordsPerMinute, 0.6, 1.6),
        pitchFactor,
      };
    }
  }
  const base = ESPEAK_VOICES[language];
  if (!profile) return { engine: 'espeak-ng', voice: base, pitch: 50, wordsPerMinute: ESPEAK_DEFAULT_WPM };
  const female = profile.pitchHz >= FEMALE_FROM_HZ;
  return {
    engine: 'espeak-ng',
    voice: female ? `${base}+f3` : base,
    pitch: espeakPitchFor(profile.pitchHz, ESPEAK_PITCH[female ? 'female' : 'male']),
    wordsPerMinute: Math.round(clamp(profile.wordsPerMinute, 80, 320)),
  };
}

/** The samples of a 16-bit WAV (espeak-ng --stdout leaves the sizes unset: read to the end). */
export function wavSamples(wav: Buffer): Int16Array {
  let offset = 12;
  while (offset + 8 <= wav.length) {
    const id = wav.toString('ascii', offset, offset + 4);
    const size = wav.readUInt32LE(offset + 4);
    if (id === 'data') {
      const end = Math.min(wav.length, offset + 8 + size);
      const samples = new Int16Array((end - offset - 8) >> 1);
      new Uint8Array(samples.buffer).set(wav.subarray(offset + 8, offset + 8 + samples.byteLength));
      return samples;
    }
    offset += 8 + size + (size & 1);
  }
  throw new Error('espeak-ng produced no WAV data');
}

function espeak(
  command: string,
  text: string,
  plan: Extract<VoicePlan, { engine: 'espeak-ng' }>,
  signal: AbortSignal,
): Promise<Int16Array> {
  return new Promise((resolve, reject) => {
    // Text on stdin: a reply starting with "-" is not an option.
    const child = spawn(
      command,
      ['-v', plan.voice, '-p', String(plan.pitch), '-s', String(plan.wordsPerMinute), '--stdout', '--stdin'],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    const chunks: Buffer[] = [];
    let stderr = '';
    const onAbort = () => child.kill('SIGKILL');
    signal.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdin.on('error', () => {});
    child.once('error', reject);
    child.once('close', (code) => {
      signal.removeEventListener('abort', onAbort);
      if (signal.aborted) return resolve(new Int16Array(0));
      if (code !== 0) return reject(new Error(`espeak-ng exited with ${code}: ${stderr.trim()}`));
      try {
        resolve(wavSamples(Buffer.concat(chunks)));
      } catch (error) {
        reject(error);
      }
    });
    child.stdin.end(text);
  });
}

export class OfflineTTS extends tts.TTS {
  label = 'offline.TTS';
  readonly #server: SpeechServer;
  readonly #espeakCommand: string;
  #options: OfflineTTSOptions;

  constructor(server: SpeechServer, espeakCommand: string, options: OfflineTTSOptions) {
    super(OFFLINE_TTS_SAMPLE_RATE, 1, { streaming: false });
    this.#server = server;
    this.#espeakCommand = espeakCommand;
    this.#options = { ...options };
  }

  override get model(): string {
    return planVoice(this.#options).engine;
  }

  override get provider(): string {
    return 'likeness-offline';
  }

  /** Takes effect from the next text synthesised (the next sentence). */
  updateOptions(options: Partial<OfflineTTSOptions>): void {
    this.#options = { ...this.#options, ...options };
  }

  synthesize(
    text: string,
    connOptions: APIConnectOptions = DEFAULT_API_CONNECT_OPTIONS,
    abortSignal?: AbortSignal,
  ): OfflineChunkedStream {
    return new OfflineChunkedStream(this, text, planVoice(this.#options), connOptions, abortSignal);
  }

  stream(_options?: { connOptions?: APIConnectOptions }): tts.SynthesizeStream {
    throw new Error('offline.TTS synthesises whole texts: wrap it in tts.StreamAdapter (AgentSession does)');
  }

  /** Raw samples of one text (used by the chunked stream), with their phonemes' timing. */
  async *_speak(text: string, plan: VoicePlan, signal: AbortSignal): AsyncGenerator<SpokenChunk> {
    if (plan.engine === 'piper' || this.#server.espeak) {
      yield* this.#server.speak(text, plan, signal);
    } else {
      // Without libespeak-ng in the speech process: the command, untimed (the lips follow loudness).
      yield {
        samples: await espeak(this.#espeakCommand, text, plan, signal),
        sampleRate: OFFLINE_TTS_SAMPLE_RATE,
        phonemes: [],
      };
    }
  }
}

export class OfflineChunkedStream extends tts.ChunkedStream {
  label = 'offline.ChunkedStream';
  readonly #tts: OfflineTTS;
  readonly #plan: VoicePlan;

  constructor(
    voice: OfflineTTS,
    text: string,
    plan: VoicePlan,
    connOptions: APIConnectOptions,
    abortSignal?: AbortSignal,
  ) {
    super(text, voice, { ...connOptions, maxRetry: 0 }, abortSignal);
    this.#tts = voice;
    this.#plan = plan;
  }

  protected async run(): Promise<void> {
    const requestId = shortuuid('offline_');
    const bytes = new AudioByteStream(OFFLINE_TTS_SAMPLE_RATE, 1);
    const signal = this.abortSignal;
    // The text's viseme cues (seconds from its first sample); each frame carries those that
    // start within it, so the avatar's speech queue keeps them with the audio.
    const cues: VisemeCue[] = [];
    let spoken = 0;
    let framed = 0;
    // Each frame goes out once the next one exists, so the last can be flagged final.
    let held: tts.SynthesizedAudio | undefined;
    const put = (frame: tts.SynthesizedAudio['frame']) => {
      const within = cuesWithin(
        cues,
        framed / OFFLINE_TTS_SAMPLE_RATE,
        frame.samplesPerChannel / OFFLINE_TTS_SAMPLE_RATE,
      );
      if (within.length > 0) frame.userdata[VISEME_CUES] = within;
      framed += frame.samplesPerChannel;
      if (held && !this.queue.closed) this.queue.put(held);
      held = { requestId, segmentId: requestId, frame, final: false };
    };
    // Samples cut before the text's first sound (leadingSilence): the cues move back as much.
    let cut = 0;
    try {
      for await (const spokenChunk of this.#tts._speak(this.inputText, this.#plan, signal)) {
        const { sampleRate, phonemes } = spokenChunk;
        if (signal.aborted) return;
        if (sampleRate !== OFFLINE_TTS_SAMPLE_RATE)
          throw new Error(`the offline voice spoke at ${sampleRate} Hz, not ${OFFLINE_TTS_SAMPLE_RATE}`);
        const first = spoken === 0;
        if (first) cut = leadingSilence(spokenChunk.samples, sampleRate);
        const offset = (spoken - cut) / OFFLINE_TTS_SAMPLE_RATE;
        for (const cue of cuesFromPhonemes(phonemes, OFFLINE_TTS_SAMPLE_RATE)) {
          // A cue that began in the cut silence (the rest before the first sound) keeps its rest.
          const start = cue.start + offset;
          if (cue.duration + Math.min(0, start) > 0)
            cues.push({ ...cue, start: Math.max(0, start), duration: cue.duration + Math.min(0, start) });
        }
        spoken += spokenChunk.samples.length;
        const samples = first ? spokenChunk.samples.subarray(cut) : spokenChunk.samples;
        for (const frame of bytes.write(
          samples.buffer.slice(samples.byteOffset, samples.byteOffset + samples.byteLength),
        ))
          put(frame);
      }
      for (const frame of bytes.flush()) put(frame);
      if (held && !this.queue.closed && !signal.aborted) this.queue.put({ ...held, final: true });
    } catch (error) {
      if (signal.aborted) return;
      throw error;
    }
  }
}
