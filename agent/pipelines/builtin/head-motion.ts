// Idle life: the head drifts a little (a few slow, unrelated sways), the chest breathes
// (the head rises and falls with it), and the two moods differ. Speaking, the head moves
// more, dips on loud stretches, and accents stressed syllables with a short nod (and tilt) and a lift
// of the brows (Piper marks the stress; other voices, a loud onset after a quieter moment);
// listening, it tilts a little toward the visitor and nods when they pause (now and then
// when their speech is not known). Amplitudes are shares of the face's height, so every
// framing moves alike.
import { smoothstep } from '../../../src/contract/face-rig.ts';

/** What the face hears this frame. */
export interface Hearing {
  /** The avatar is speaking. */
  speaking: boolean;
  /** The mouth's openness (0 in silence). */
  loudness: number;
  /** A stressed syllable starts now (undefined: the avatar's voice does not mark stress). */
  stressed?: boolean;
  /** The visitor is speaking (undefined: not known). */
  visitorSpeaking?: boolean;
}

export interface HeadPose {
  /** px */
  dx: number;
  dy: number;
  /** radians */
  roll: number;
  /** 0 … 1: how far the brows are lifted (an accent). */
  brow: number;
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
/** A nod at the visitor's pause: this long, and no closer to the previous. */
const LISTEN_NOD_MS = 600;
const LISTEN_NOD_GAP_MS = 1_500;
/** An accent: a nod this deep (share of the face's height) over NOD_MS, the brows up over BROW_MS. */
const ACCENT_NOD = 0.006;
const ACCENT_NOD_MS = 320;
/** …with a tilt this big (degrees, over the nod), to one side then the other: a speaker's head does not only bob. */
const ACCENT_TILT = 0.7 * DEGREE;
const ACCENT_BROW_MS = 480;
/** Accents come no closer than this: a nod on every syllable would look like a twitch. */
const ACCENT_GAP_MS = 450;
/** Without stress marks: a loud syllable after a quieter moment (openness, 0–1). */
const ONSET_LOUD = 0.75;
const ONSET_QUIET = 0.35;

export class HeadMotion {
  readonly #faceHeight: number;
  readonly #phases: number[];
  #speaking = 0;
  #emphasis = 0;
  #accentAt = -Infinity;
  #listenNodAt = -Infinity;
  #visitorSpoke = false;
  #accentStrength = 0;
  /** The side the next accent tilts to (+1 or -1). */
  #accentSide = 1;
  /** The openness of the last few frames (a loud onset follows a quieter one). */
  #recent: number[] = [];

  constructor(faceHeight: number, random: () => number) {
    this.#faceHeight = faceHeight;
    this.#phases = Array.from({ length: 7 }, () => random() * 2 * Math.PI);
  }

  /** The head for the frame at `elapsedMs`. */
  next(elapsedMs: number, { speaking, loudness, stressed, visitorSpeaking }: Hearing): HeadPose {
    // The visitor paused: a listener's nod (acknowledging), unless one came just before.
    if (this.#visitorSpoke && visitorSpeaking === false && elapsedMs - this.#listenNodAt >= LISTEN_NOD_GAP_MS)
      this.#listenNodAt = elapsedMs;
    this.#visitorSpoke = visitorSpeaking === true;
    const quietBefore = this.#recent.length > 0 && Math.min(...this.#recent) < ONSET_QUIET;
    this.#recent.push(loudness);
    if (this.#recent.length > 3) this.#recent.shift();
    const accent = stressed ?? (loudness > ONSET_LOUD && quietBefore);
    if (speaking && accent && elapsedMs - this.#accentAt >= ACCENT_GAP_MS) {
      this.#accentAt = elapsedMs;
      this.#accentStrength = 0.5 + 0.5 * Math.min(1, loudness);
      this.#accentSide = -this.#accentSide;
    }
    const since = elapsedMs - this.#accentAt;
    const nodPulse = since < ACCENT_NOD_MS ? Math.sin((Math.PI * since) / ACCENT_NOD_MS) : 0;
    const brow =
      since < ACCENT_BROW_MS
        ? this.#accentStrength *
          smoothstep(0, 0.2, since / ACCENT_BROW_MS) *
          (1 - smoothstep(0.35, 1, since / ACCENT_BROW_MS))
        : 0;
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
    // A listener's nod: at the visitor's pauses, or, when their speech is not known, every few seconds.
    const sinceNod = elapsedMs - this.#listenNodAt;
    const nod =
      visitorSpeaking === undefined
        ? Math.max(0, Math.sin((2 * Math.PI * t) / NOD_EVERY_S + p[3]!)) ** 6
        : sinceNod < LISTEN_NOD_MS
          ? Math.sin((Math.PI * sinceNod) / LISTEN_NOD_MS) ** 2
          : 0;
    const dy =
      h * SWAY_Y * lively * (0.6 * sway(0.09, p[4]!) + 0.4 * sway(0.23, p[5]!)) +
      breath +
      h * EMPHASIS * this.#emphasis * this.#speaking +
      h * NOD * nod * listening +
      h * ACCENT_NOD * this.#accentStrength * nodPulse;
    const roll =
      ROLL * lively * sway(0.06, p[6]!) +
      LISTENING_TILT * listening +
      ACCENT_TILT * this.#accentStrength * nodPulse * this.#accentSide;
    return { dx, dy, roll, brow };
  }
}
