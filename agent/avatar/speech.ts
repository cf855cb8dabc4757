// What receives the agent's speech for the avatar (Python's `AudioReceiver` role, in
// process): the AgentSession writes its TTS audio here instead of publishing a voice track,
// and the runner takes it back 40 ms at a time, in step with the video frames. It answers
// the session's playback bookkeeping: started on a segment's first sample out, finished
// (or interrupted) once per segment, or `waitForPlayout` never returns.
import type { AudioFrame } from '@livekit/rtc-node';
import { voice } from '@livekit/agents';
import { AVATAR_SAMPLE_RATE } from '../../src/contract/index.ts';

interface Segment {
  chunks: Int16Array[];
  /** Samples of `chunks[0]` already taken. */
  offset: number;
  /** The session flushed it: no more audio will come for it. */
  ended: boolean;
  playedSamples: number;
  started: boolean;
}

export interface SpeechSlice {
  /** Exactly the requested number of samples, mono; silence where there was no speech. */
  samples: Int16Array;
  /** How many of them were speech. */
  speechSamples: number;
}

export class AvatarSpeech extends voice.AudioOutput {
  #segments: Segment[] = [];
  #onClear: Array<() => void> = [];

  constructor() {
    super(AVATAR_SAMPLE_RATE);
  }

  /** Called (synchronously) on an interruption, after the buffered speech was dropped. */
  onClear(listener: () => void): void {
    this.#onClear.push(listener);
  }

  /** True while speech is buffered or still arriving. */
  get speaking(): boolean {
    return this.#segments.length > 0;
  }

  override async captureFrame(frame: AudioFrame): Promise<void> {
    await super.captureFrame(frame);
    let segment = this.#segments.at(-1);
    if (!segment || segment.ended) {
      segment = { chunks: [], offset: 0, ended: false, playedSamples: 0, started: false };
      this.#segments.push(segment);
    }
    segment.chunks.push(frame.channels === 1 ? frame.data : firstChannel(frame));
  }

  override flush(): void {
    super.flush();
    const segment = this.#segments.at(-1);
    if (segment) segment.ended = true;
    this.#finishDrainedSegments();
  }

  override clearBuffer(): void {
    // The session may clear without flushing first: close the open segment either way, so
    // the next reply counts as a new one.
    super.flush();
    const dropped = this.#segments;
    this.#segments = [];
    for (const segment of dropped) {
      this.onPlaybackFinished({ playbackPosition: segment.playedSamples / AVATAR_SAMPLE_RATE, interrupted: true });
    }
    for (const listener of this.#onClear) listener();
  }

  /** The next `count` samples to play: speech where there is some, then silence. */
  take(count: number): SpeechSlice {
    const samples = new Int16Array(count);
    let filled = 0;
    while (filled < count) {
      const segment = this.#segments[0];
      const chunk = segment?.chunks[0];
      if (!segment || !chunk) break; // nothing buffered (TTS slower than real time, or silence)
      if (!segment.started) {
        segment.started = true;
        this.onPlaybackStarted(Date.now());
      }
      const n = Math.min(count - filled, chunk.length - segment.offset);
      samples.set(chunk.subarray(segment.offset, segment.offset + n), filled);
      filled += n;
      segment.offset += n;
      segment.playedSamples += n;
      if (segment.offset === chunk.length) {
        segment.chunks.shift();
        segment.offset = 0;
      }
      this.#finishDrainedSegments();
    }
    return { samples, speechSamples: filled };
  }

  #finishDrainedSegments(): void {
    while (this.#segments[0]?.ended && this.#segments[0].chunks.length === 0) {
      const segment = this.#segments.shift()!;
      this.onPlaybackFinished({ playbackPosition: segment.playedSamples / AVATAR_SAMPLE_RATE, interrupted: false });
    }
  }
}

function firstChannel(frame: AudioFrame): Int16Array {
  const mono = new Int16Array(frame.samplesPerChannel);
  for (let i = 0; i < mono.length; i++) mono[i] = frame.data[i * frame.channels]!;
  return mono;
}
