// Lips from the voice. When the TTS timed its phonemes, each 40 ms slice comes with the
// visemes it says (agent/visemes): their shapes, blended by how much of the slice each
// covers, set the mouth (lips pressed on m/b/p even while the hum is loud, rounded on o/u/w,
// spread on i/e, wide on a), and loudness sizes the opening. Without timing, loudness
// against the voice's recent peaks gives the openness and the sound its shape (hiss draws
// the lips apart and nearly closed, as in "s"; dark, low-pitched sound rounds them, as in
// "oo"). Openness follows quickly and lets go a little slower, as lips do; silence closes
// the mouth at once, so an interruption shuts it in the very frame the speech stops.
import { smoothstep } from '../../../src/contract/face-rig.ts';
import { VISEME_SHAPES, type Viseme } from '../../visemes/index.ts';

export interface MouthShape {
  /** 0 closed … 1 wide open. */
  open: number;
  /** Positive: rounded; negative: spread. */
  round: number;
  /** 0 … 1 lips pressed together (visemes only: loudness cannot tell an "m" from an "a"). */
  press: number;
}

/** Share of the way to a louder target covered per frame. */
const ATTACK = 0.7;
/** Share of the way to a quieter target covered per frame. */
const RELEASE = 0.5;
/** Below this RMS (full scale 1) a slice counts as a pause between words: lips closed. */
const GATE_RMS = 0.003; // about −50 dBFS
/** The running peak forgets slowly (per frame), so a quieter voice still opens the mouth fully. */
const PEAK_DECAY = 0.997;
/** The peak never falls below this: near-silence is not stretched to a wide-open mouth. */
const PEAK_FLOOR = 0.02;
/** A slice this much m/b/p shows the lips pressed: a plosive lasts a frame or two, and must be seen. */
const CLOSED_SHARE = 0.3;
/** With visemes, the opening's size between a whisper and the voice's peaks. */
const QUIET_SIZE = 0.2;
/** One-pole low-pass at about 1 kHz (48 kHz): the share of energy below it tells vowels' roundness. */
const LOW_PASS = Math.exp((-2 * Math.PI * 1000) / 48_000);

export class LipSync {
  #open = 0;
  #round = 0;
  #press = 0;
  #peak = 0.1;

  /** The mouth for this frame's audio; `speechSamples` 0 (silence, an interruption) closes it now. */
  next(audio: Int16Array, speechSamples: number, visemes?: Partial<Record<Viseme, number>>): MouthShape {
    const n = Math.min(audio.length, speechSamples);
    if (n <= 0) {
      this.#open = 0;
      this.#round = 0;
      this.#press = 0;
      return { open: 0, round: 0, press: 0 };
    }
    let energy = 0;
    let edges = 0;
    let low = 0;
    let previous = audio[0]!;
    let filtered = 0;
    for (let i = 0; i < n; i++) {
      const x = audio[i]!;
      energy += x * x;
      const d = x - previous;
      edges += d * d;
      previous = x;
      filtered = x + LOW_PASS * (filtered - x);
      low += filtered * filtered;
    }
    const rms = Math.sqrt(energy / n) / 32768;
    this.#peak = Math.max(rms, PEAK_FLOOR, this.#peak * PEAK_DECAY);
    const loudness = rms > GATE_RMS ? Math.min(1, 1.1 * (rms / this.#peak) ** 0.75) : 0;
    let target = 0;
    let round = 0;
    const said = visemes && blendedShape(visemes);
    if (said) {
      if ((visemes.closed ?? 0) >= CLOSED_SHARE) {
        // Pressed lips, whatever the loudness (an "m" hums): at once, not eased.
        this.#open = 0;
        this.#press = 1;
        this.#round += (0 - this.#round) * 0.5;
        return { open: 0, round: this.#round, press: 1 };
      }
      target = said.open * (QUIET_SIZE + (1 - QUIET_SIZE) * loudness);
      round = said.round;
      this.#press += (said.press - this.#press) * (said.press > this.#press ? ATTACK : 0.75);
    } else {
      this.#press = 0;
    }
    if (!said && loudness > 0) {
      // Hiss: the sample-to-sample differences carry much of the energy.
      const hiss = smoothstep(0.12, 0.5, edges / Math.max(1, energy));
      const lowShare = low / Math.max(1, energy);
      target = loudness * (1 - 0.55 * hiss);
      round = 0.12 * smoothstep(0.55, 0.9, lowShare) - 0.08 * hiss;
    }
    this.#open += (target - this.#open) * (target > this.#open ? ATTACK : RELEASE);
    this.#round += (round - this.#round) * (said ? 0.7 : 0.5);
    return { open: this.#open, round: this.#round, press: this.#press };
  }
}

/** The blend of the visemes' shapes, by share; undefined when nothing was said. */
export function blendedShape(
  visemes: Partial<Record<Viseme, number>>,
): { open: number; round: number; press: number } | undefined {
  let total = 0;
  let open = 0;
  let round = 0;
  let press = 0;
  for (const [viseme, share] of Object.entries(visemes) as Array<[Viseme, number]>) {
    total += share;
    open += share * VISEME_SHAPES[viseme].open;
    round += share * VISEME_SHAPES[viseme].round;
    press += share * VISEME_SHAPES[viseme].press;
  }
  return total > 0 ? { open: open / total, round: round / total, press: press / total } : undefined;
}
