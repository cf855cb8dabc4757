// Where the eyes look, sideways. Mostly at the visitor (the camera), as a face in a video call
// does, with the small involuntary jumps of real eyes (saccades, every half second to two, a
// few per cent of the eye's width) and, while speaking, glances aside, held for a moment,
// then back. Eyes jump, they do not drift: each shift takes one or two frames. (Looking up or
// down moves the lids too; a warp of the eye's inside alone cannot show it.)

const FRAME_MS = 40;
/** Tiny jumps around the current target, both moods (shares of the eye's half-width). */
const SACCADE_EVERY_MS: [number, number] = [500, 2_000];
const SACCADE_SIZE = 0.05;
/** While speaking, a glance aside every few seconds, held a little. */
const GLANCE_EVERY_MS: [number, number] = [2_500, 6_000];
const GLANCE_HOLD_MS: [number, number] = [400, 1_100];
const GLANCE_SIZE = 0.25;
/** Share of the way to the target covered per frame: a jump over two frames. */
const JUMP = 0.65;

export class Gaze {
  readonly #random: () => number;
  #at = 0;
  #target = 0;
  #glance: number | null = null;
  #nextSaccadeMs: number;
  #nextGlanceMs: number;
  #glanceEndsMs = 0;

  constructor(random: () => number) {
    this.#random = random;
    this.#nextSaccadeMs = this.#between(SACCADE_EVERY_MS);
    this.#nextGlanceMs = this.#between(GLANCE_EVERY_MS);
  }

  /** The gaze for the frame at `elapsedMs` (share of the eye's half-width, positive: image right). */
  next(elapsedMs: number, speaking: boolean): number {
    if (this.#glance !== null && elapsedMs >= this.#glanceEndsMs) {
      this.#glance = null;
      this.#target = 0;
      this.#nextGlanceMs = elapsedMs + this.#between(GLANCE_EVERY_MS);
    }
    if (this.#glance === null && elapsedMs >= this.#nextGlanceMs) {
      if (speaking) {
        this.#glance = (this.#random() < 0.5 ? -1 : 1) * GLANCE_SIZE * (0.6 + 0.4 * this.#random());
        this.#target = this.#glance;
        this.#glanceEndsMs = elapsedMs + this.#between(GLANCE_HOLD_MS);
      } else {
        this.#nextGlanceMs = elapsedMs + this.#between(GLANCE_EVERY_MS);
      }
    }
    if (elapsedMs >= this.#nextSaccadeMs) {
      this.#target = (this.#glance ?? 0) + SACCADE_SIZE * (2 * this.#random() - 1);
      this.#nextSaccadeMs = elapsedMs + this.#between(SACCADE_EVERY_MS);
    }
    this.#at += (this.#target - this.#at) * JUMP;
    return this.#at;
  }

  #between([low, high]: [number, number]): number {
    return Math.round((low + this.#random() * (high - low)) / FRAME_MS) * FRAME_MS;
  }
}
