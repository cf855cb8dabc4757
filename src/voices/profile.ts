// The offline voice profile: what the offline text-to-speech can imitate of a speaker, measured
// from the decoded sample (16 kHz mono). Median pitch by normalised autocorrelation over voiced
// frames; speaking rate from syllable nuclei (peaks of the loudness envelope) over the time spent
// talking. Both are rough, and that is enough: espeak-ng takes a pitch and a words-per-minute rate.
import type { VoiceProfile } from './voice.ts';

const RATE = 8_000; // analysed after halving 16 kHz: F0 tops out near 500 Hz
const FRAME = 320; // 40 ms: at least two periods of a 60 Hz voice
const HOP = 80; // 10 ms
const MIN_HZ = 60;
const MAX_HZ = 500;
/**
 * Long samples say nothing more about pitch or pace: the first 20 s give a steady median, and
 * identity create waits for this (about 40 ms for 20 s).
 */
const MAX_ANALYSED_SECONDS = 20;
/** English averages about 1.5 syllables a word; espeak-ng's rate is in words per minute. */
const SYLLABLES_PER_WORD = 1.5;

/** What a profile is clamped to: what espeak-ng renders sensibly. */
export const PROFILE_LIMITS = { pitchHz: [70, 350], wordsPerMinute: [80, 300] } as const;

export class SilentSample extends Error {}

export function measureVoiceProfile(pcm16kMono: Int16Array): VoiceProfile {
  const x = downsample(pcm16kMono.subarray(0, MAX_ANALYSED_SECONDS * 16_000));
  const frames = Math.max(0, Math.floor((x.length - FRAME) / HOP) + 1);
  const rms = new Float64Array(frames);
  for (let f = 0; f < frames; f++) {
    let sum = 0;
    for (let i = f * HOP, end = i + FRAME; i < end; i++) sum += x[i]! * x[i]!;
    rms[f] = Math.sqrt(sum / FRAME);
  }
  // Loud enough to be speech: relative to the loud end of this recording, so gain does not matter.
  const loud = percentile(rms, 0.95);
  if (loud < 1e-4) throw new SilentSample('The voice sample is silent');
  const speechFloor = loud * 0.1;

  const pitches: number[] = [];
  const voiced = new Uint8Array(frames);
  const squares = prefixSquares(x);
  // Every other frame (20 ms apart) is plenty for a median, and halves the bulk of the work.
  for (let f = 0; f < frames; f += 2) {
    if (rms[f]! < speechFloor) continue;
    const hz = framePitch(x, squares, f * HOP);
    if (hz !== undefined) {
      pitches.push(hz);
      voiced[f] = 1;
    }
  }
  // A loud frame in between is voiced when a neighbour is.
  for (let f = 1; f < frames; f += 2) {
    if (rms[f]! >= speechFloor && (voiced[f - 1] || voiced[f + 1])) voiced[f] = 1;
  }
  if (pitches.length < 5) throw new SilentSample('The voice sample has too little voiced speech to measure');
  const pitchHz = percentile(Float64Array.from(pitches), 0.5);

  const syllables = countSyllableNuclei(rms, voiced, speechFloor);
  const talkingSeconds = talkingTime(rms, speechFloor);
  const wordsPerMinute = ((syllables / Math.max(talkingSeconds, 0.5)) * 60) / SYLLABLES_PER_WORD;
  return {
    pitchHz: Math.round(clamp(pitchHz, PROFILE_LIMITS.pitchHz)),
    wordsPerMinute: Math.round(clamp(wordsPerMinute, PROFILE_LIMITS.wordsPerMinute)),
  };
}

/** 16 → 8 kHz with a two-tap average as the (gentle) anti-alias filter; scaled to ±1. */
function downsample(pcm: Int16Array): Float64Array {
  const out = new Float64Array(pcm.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = (pcm[2 * i]! + pcm[2 * i + 1]!) / 65536;
  return out;
}

/** Running sums of x²: the energy of x[a..b) is squares[b] − squares[a]. */
function prefixSquares(x: Float64Array): Float64Array {
  const squares = new Float64Array(x.length + 1);
  for (let i = 0; i < x.length; i++) squares[i + 1] = squares[i]! + x[i]! * x[i]!;
  return squares;
}

/**
 * F0 of one frame, or undefined when it is not clearly periodic. Normalised cross-correlation
 * against the lagged signal; the shortest lag within 90 % of the best avoids octave-down errors
 * (a period's double correlates almost as well as the period itself).
 */
function framePitch(x: Float64Array, squares: Float64Array, start: number): number | undefined {
  const minLag = Math.floor(RATE / MAX_HZ);
  const maxLag = Math.ceil(RATE / MIN_HZ);
  if (start + FRAME + maxLag > x.length) return undefined;
  const energy0 = squares[start + FRAME]! - squares[start]!;
  const scores = new Float64Array(maxLag + 1);
  let best = 0;
  for (let lag = minLag; lag <= maxLag; lag++) {
    let dot = 0;
    for (let i = start, end = start + FRAME; i < end; i++) dot += x[i]! * x[i + lag]!;
    // The lagged window's energy from running sums: the inner loop is the dot product alone.
    const energy = squares[start + lag + FRAME]! - squares[start + lag]!;
    const score = dot / Math.sqrt(energy0 * energy + 1e-12);
    scores[lag] = score;
    if (score > best) best = score;
  }
  if (best < 0.6) return undefined;
  for (let lag = minLag + 1; lag < maxLag; lag++) {
    const s = scores[lag]!;
    if (s >= 0.9 * best && s >= scores[lag - 1]! && s >= scores[lag + 1]!) {
      // Parabolic interpolation around the peak for sub-sample precision.
      const a = scores[lag - 1]!;
      const c = scores[lag + 1]!;
      const denominator = a - 2 * s + c;
      const shift = denominator === 0 ? 0 : (0.5 * (a - c)) / denominator;
      return RATE / (lag + shift);
    }
  }
  return undefined;
}

/**
 * Syllable nuclei: peaks of the smoothed loudness (in dB) that stand at least 2 dB above the dip
 * before them, are loud enough to be speech, are voiced, and lie at least 100 ms apart.
 */
function countSyllableNuclei(rms: Float64Array, voiced: Uint8Array, floor: number): number {
  const db = smooth(
    Float64Array.from(rms, (v) => 20 * Math.log10(v + 1e-9)),
    3,
  );
  const floorDb = 20 * Math.log10(floor);
  let count = 0;
  let lastPeak = -Infinity;
  let dip = Infinity;
  for (let f = 1; f < db.length - 1; f++) {
    dip = Math.min(dip, db[f]!);
    const isPeak = db[f]! >= db[f - 1]! && db[f]! > db[f + 1]!;
    if (!isPeak || db[f]! < floorDb || !voiced[f] || db[f]! - dip < 2) continue;
    if (f - lastPeak < 10) continue;
    count++;
    lastPeak = f;
    dip = Infinity;
  }
  return count;
}

/** Seconds from the first to the last speech frame, minus pauses longer than 300 ms (breaths, gaps). */
function talkingTime(rms: Float64Array, floor: number): number {
  let frames = 0;
  let silentRun = 0;
  let started = false;
  for (const value of rms) {
    if (value >= floor) {
      if (started) frames += Math.min(silentRun, 30);
      silentRun = 0;
      started = true;
      frames++;
    } else if (started) silentRun++;
  }
  return (frames * HOP) / RATE;
}

function smooth(values: Float64Array, radius: number): Float64Array {
  const out = new Float64Array(values.length);
  for (let i = 0; i < values.length; i++) {
    let sum = 0;
    let n = 0;
    for (let j = Math.max(0, i - radius); j <= Math.min(values.length - 1, i + radius); j++, n++) sum += values[j]!;
    out[i] = sum / n;
  }
  return out;
}

function percentile(values: Float64Array, q: number): number {
  if (!values.length) return 0;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function clamp(value: number, [min, max]: readonly [number, number]): number {
  return Math.min(max, Math.max(min, value));
}
