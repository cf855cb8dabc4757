// Speech audio for the provider fakes and their tests: 16-bit PCM and WAV, loudness,
// real spoken phrases from espeak-ng, and a speech-like signal the TTS fakes return.
import { runCommandForBytes } from '../run-command.ts';

/** What a fake "recognised": the next scripted utterance. */
export interface ScriptedUtterance {
  transcript: string;
  /** ISO 639-1 code, e.g. 'es'; reported as the detected language where the protocol has one. */
  language?: string;
}

export interface Pcm {
  samples: Int16Array;
  sampleRate: number;
}

/** Little-endian 16-bit samples from bytes at any offset (copies, so alignment never matters). */
export function pcm16(bytes: Uint8Array): Int16Array {
  const even = bytes.byteLength - (bytes.byteLength % 2);
  const copy = new Uint8Array(even);
  copy.set(bytes.subarray(0, even));
  return new Int16Array(copy.buffer);
}

/** Root mean square of samples, 0 (silence) … 1 (full scale). */
export function rms(samples: Int16Array): number {
  if (samples.length === 0) return 0;
  let sum = 0;
  for (const s of samples) sum += (s / 32768) ** 2;
  return Math.sqrt(sum / samples.length);
}

export function wavFile({ samples, sampleRate }: Pcm): Uint8Array<ArrayBuffer> {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + samples.byteLength, 4);
  header.write('WAVE', 8);
  header.write('fmt ', 12);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(samples.byteLength, 40);
  const out = new Uint8Array(44 + samples.byteLength);
  out.set(header, 0);
  out.set(new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength), 44);
  return out;
}

/** Mono 16-bit PCM from a WAV file. A streamed WAV (espeak-ng --stdout) declares an
 * unknown data length, so the data chunk is read up to the end of the bytes. */
export function parseWav(bytes: Uint8Array): Pcm {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));
  if (tag(0) !== 'RIFF' || tag(8) !== 'WAVE') throw new Error('not a WAV file');
  let sampleRate = 0;
  let channels = 1;
  for (let at = 12; at + 8 <= bytes.byteLength; ) {
    const id = tag(at);
    const size = view.getUint32(at + 4, true);
    if (id === 'fmt ') {
      if (view.getUint16(at + 8, true) !== 1 || view.getUint16(at + 22, true) !== 16)
        throw new Error('WAV is not 16-bit PCM');
      channels = view.getUint16(at + 10, true);
      sampleRate = view.getUint32(at + 12, true);
    } else if (id === 'data') {
      const all = pcm16(bytes.subarray(at + 8, Math.min(bytes.byteLength, at + 8 + size)));
      if (channels === 1) return { samples: all, sampleRate };
      return { samples: all.filter((_, i) => i % channels === 0), sampleRate };
    }
    at += 8 + size + (size % 2);
  }
  throw new Error('WAV has no data chunk');
}

/** Linear-interpolation resampling: good enough for test speech, no native code. */
export function resample({ samples, sampleRate }: Pcm, toRate: number): Pcm {
  if (sampleRate === toRate) return { samples, sampleRate };
  const out = new Int16Array(Math.floor((samples.length * toRate) / sampleRate));
  for (let i = 0; i < out.length; i++) {
    const pos = (i * sampleRate) / toRate;
    const left = Math.floor(pos);
    const a = samples[left] ?? 0;
    const b = samples[left + 1] ?? a;
    out[i] = Math.round(a + (b - a) * (pos - left));
  }
  return { samples: out, sampleRate: toRate };
}

export function silence(seconds: number, sampleRate: number): Pcm {
  return { samples: new Int16Array(Math.round(seconds * sampleRate)), sampleRate };
}

/** A real spoken phrase from espeak-ng (`apt-get install -y espeak-ng`), resampled to `sampleRate`. */
export async function espeak(
  text: string,
  { voice = 'en', wordsPerMinute = 150, sampleRate = 16_000 } = {},
): Promise<Pcm> {
  return resample(parseWav(await espeakWav(text, { voice, wordsPerMinute })), sampleRate);
}

/** The WAV espeak-ng makes of `text`; `pitch` is its 0–99 scale (its own default unless given), `wordsPerMinute` its -s. */
export async function espeakWav(
  text: string,
  { voice = 'en', wordsPerMinute = 150, pitch }: { voice?: string; wordsPerMinute?: number; pitch?: number } = {},
): Promise<Uint8Array> {
  const { code, stdout, stderr } = await runCommandForBytes([
    'espeak-ng',
    '-v',
    voice,
    ...(pitch === undefined ? [] : ['-p', String(pitch)]),
    '-s',
    String(wordsPerMinute),
    '--stdout',
    text,
  ]);
  if (code !== 0) throw new Error(`espeak-ng failed (${code}): ${stderr}`);
  return stdout;
}

/** A voiced, syllable-paced signal (a 140 Hz buzz with harmonics under a 4 Hz envelope):
 * clearly non-silent to any energy detector, and obviously not a real voice. */
export function speechLikeAudio(seconds: number, sampleRate: number): Pcm {
  const samples = new Int16Array(Math.round(seconds * sampleRate));
  for (let i = 0; i < samples.length; i++) {
    const t = i / sampleRate;
    const buzz =
      Math.sin(2 * Math.PI * 140 * t) + 0.5 * Math.sin(2 * Math.PI * 280 * t) + 0.25 * Math.sin(2 * Math.PI * 420 * t);
    const syllables = 0.55 + 0.45 * Math.sin(2 * Math.PI * 4 * t);
    samples[i] = Math.round((buzz * syllables * 0.3 * 32767) / 1.75);
  }
  return { samples, sampleRate };
}
