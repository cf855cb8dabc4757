// Blinks: every 2–6 s at random, each about 160 ms over four frames, the lids fully shut in
// the second (a blink too short to catch a closed frame would not read as one).

/** Lid closure in the consecutive frames of one blink: a fast close, a slower open. */
export const BLINK_FRAMES = [0.6, 1, 0.6, 0.22] as const;
const MIN_INTERVAL_MS = 2_000;
const MAX_INTERVAL_MS = 6_000;
const FRAME_MS = 40;

export class Blinks {
  readonly #random: () => number;
  /** The frame the next (or current) blink starts at. */
  #start: number;

  constructor(random: () => number) {
    this.#random = random;
    // The first comes sooner than a full interval: a face that stares at first looks frozen.
    this.#start = Math.round((800 + random() * 2_500) / FRAME_MS);
  }

  /** Lid closure (0 open … 1 shut) for the frame at `elapsedMs`. */
  closure(elapsedMs: number): number {
    const frame = Math.round(elapsedMs / FRAME_MS);
    while (frame >= this.#start + BLINK_FRAMES.length) {
      this.#start += Math.round((MIN_INTERVAL_MS + this.#random() * (MAX_INTERVAL_MS - MIN_INTERVAL_MS)) / FRAME_MS);
    }
    const offset = frame - this.#start;
    return offset >= 0 ? BLINK_FRAMES[offset]! : 0;
  }
}
