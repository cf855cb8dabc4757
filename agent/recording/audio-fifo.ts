// A voice heard in the room, waiting to be mixed into the recording: pushed as LiveKit
// delivers it (10 ms frames, on the network's schedule), taken one avatar tick at a time (on
// the runner's). Bounded, so a voice that arrives faster than it is taken (a stalled loop,
// clocks that drift) cannot grow the job's memory or push that voice ever later in the file.

export interface AudioTake {
  /** The next `count` samples, zero-padded when there are fewer. */
  take(count: number): Int16Array;
  /** Forgets what is queued (the recording starts now). */
  clear?(): void;
}

export interface AudioFifoOptions {
  /** Samples kept at most; the oldest go first. */
  maxSamples: number;
  /**
   * Samples held back before the first take and after each underrun: network frames arrive
   * in bursts, and taking them the moment they run short would cut the voice into clicks.
   */
  cushionSamples: number;
}

export class AudioFifo implements AudioTake {
  readonly #options: AudioFifoOptions;
  #chunks: Int16Array[] = [];
  /** Samples of the first chunk already taken. */
  #offset = 0;
  #length = 0;
  #primed = false;

  constructor(options: AudioFifoOptions) {
    this.#options = options;
  }

  get length(): number {
    return this.#length;
  }

  push(samples: Int16Array): void {
    if (samples.length === 0) return;
    this.#chunks.push(samples);
    this.#length += samples.length;
    if (this.#length > this.#options.maxSamples) this.#drop(this.#length - this.#options.maxSamples);
  }

  take(count: number): Int16Array {
    const out = new Int16Array(count);
    if (!this.#primed) {
      if (this.#length < this.#options.cushionSamples) return out;
      this.#primed = true;
    }
    let filled = 0;
    while (filled < count && this.#chunks.length > 0) {
      const chunk = this.#chunks[0]!;
      const n = Math.min(count - filled, chunk.length - this.#offset);
      out.set(chunk.subarray(this.#offset, this.#offset + n), filled);
      filled += n;
      this.#consume(n);
    }
    // Ran dry: wait for a cushion again rather than play every late frame the moment it lands.
    if (filled < count) this.#primed = false;
    return out;
  }

  clear(): void {
    this.#chunks = [];
    this.#offset = 0;
    this.#length = 0;
    this.#primed = false;
  }

  #drop(count: number): void {
    while (count > 0 && this.#chunks.length > 0) {
      const n = Math.min(count, this.#chunks[0]!.length - this.#offset);
      this.#consume(n);
      count -= n;
    }
  }

  #consume(n: number): void {
    this.#offset += n;
    this.#length -= n;
    if (this.#offset === this.#chunks[0]!.length) {
      this.#chunks.shift();
      this.#offset = 0;
    }
  }
}
