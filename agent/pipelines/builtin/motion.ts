// Idle life: the head drifts a little (a few slow, unrelated sways), the chest breathes
// (the head rises and falls with it), and the two moods differ. Speaking, the head moves
// more and dips on loud syllables; listening, it tilts a little toward the visitor and nods
// now and then. Amplitudes are shares of the face's height, so every framing moves alike.

export interface HeadPose {
  /** px */
  dx: number;
  dy: number;
  /** radians */
  roll: number;
}

const BREATH_S = 4.2;
/** How fast the mood follows the voice (per frame): about half a second. */
const MOOD_RATE = 0.08;
const DEGREE = Math.PI / 180;
// Amplitudes, as shares of the face's height (forehead to chin), and in degrees for roll.
const SWAY_X = 0.007;
const SWAY_Y = 0.0045;
const BREATH = 0.0035;
const EMPHASIS = 0.008;
const NOD = 0.008;
const ROLL = 0.5 * DEGREE;
/** Speaking, the sways grow by half. */
const LIVELIER = 0.5;
/** Listening, the head leans a little to one side: attentive. */
const LISTENING_TILT = 1.2 * DEGREE;
const NOD_EVERY_S = 3.7;

export class HeadMotion {
  readonly #faceHeight: number;
  readonly #phases: number[];
  #speaking = 0;
  #emphasis = 0;

  constructor(faceHeight: number, random: () => number) {
    this.#faceHeight = faceHeight;
    this.#phases = Array.from({ length: 7 }, () => random() * 2 * Math.PI);
  }

  /** The head for the frame at `elapsedMs`; `loudness` is the mouth's openness (0 in silence). */
  next(elapsedMs: number, speaking: boolean, loudness: number): HeadPose {
    const t = elapsedMs / 1000;
    const h = this.#faceHeight;
    const p = this.#phases;
    this.#speaking += ((speaking ? 1 : 0) - this.#speaking) * MOOD_RATE;
    // Loud stretches dip the head a little, slowly: emphasis, not a twitch per syllable.
    this.#emphasis += (loudness - this.#emphasis) * 0.12;
    const lively = 1 + LIVELIER * this.#speaking;
    const listening = 1 - this.#speaking;
    const sway = (f: number, phase: number) => Math.sin(2 * Math.PI * f * t + phase);

    const dx = h * SWAY_X * lively * (0.65 * sway(0.11, p[0]!) + 0.35 * sway(0.27, p[1]!));
    const breath = h * BREATH * Math.sin((2 * Math.PI * t) / BREATH_S + p[2]!);
    // A short dip every few seconds: a listener's nod.
    const nod = Math.pow(Math.max(0, Math.sin((2 * Math.PI * t) / NOD_EVERY_S + p[3]!)), 6);
    const dy =
      h * SWAY_Y * lively * (0.6 * sway(0.09, p[4]!) + 0.4 * sway(0.23, p[5]!)) +
      breath +
      h * EMPHASIS * this.#emphasis * this.#speaking +
      h * NOD * nod * listening;
    const roll = ROLL * lively * sway(0.06, p[6]!) + LISTENING_TILT * listening;
    return { dx, dy, roll };
  }
}
