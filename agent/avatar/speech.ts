// What receives the agent's speech for the avatar (Python's `AudioReceiver` role, in
// process): the AgentSession writes its TTS audio here instead of publishing a voice track,
// and the runner takes it back 40 ms at a time, in step with the video frames. It answers
// the session's playback bookkeeping: started on a segment's first sample out, finished
// (or interrupted) once per segment, or `waitForPlayout` never returns.
//
// It takes the TTS's frames at their own rate and resamples them itself (it declares no
// sample rate, so the session hands frames over untouched): their viseme cues or timed words (userdata,
// agent/visemes) stay with the audio, and an interruption drops both.

import { USERDATA_TIMED_TRANSCRIPT, voice } from '@livekit/agents';
import { AudioFrame, AudioResampler } from '@livekit/rtc-node';
import { AVATAR_SAMPLE_RATE } from '../../src/contract/index.ts';
import {
  cuesFromWords,
  stressWithin,
  type TimedWord,
  VISEME_CUES,
  type Viseme,
  type VisemeCue,
  visemeShares,
} from '../visemes/index.ts';

/** Lips move a little before the sound they make: each slice shows the visemes this much ahead. */
const VISEME_LEAD_S = 0.02;

interface Segment {
  /** At AVATAR_SAMPLE_RATE. */
  chunks: Int16Array[];
  /** Seconds of audio received (at its own rate): where the next frame's cues start. */
  received: number;
  resampler: AudioResampler | null;
  /** Viseme cues, seconds from the segment's first sample; empty when the TTS gives none. */
  cues: VisemeCue[];
  /** Some cue marks a stressed syllable: the voice marks stress (Piper does, espeak-ng's events do not). */
  marksStress: boolean;
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
  /** The share of the slice each viseme covers, when the speech came with cues. */
  visemes?: Partial<Record<Viseme, number>>;
  /** Whether a stressed syllable starts in the slice; absent when the speech does not mark stress. */
  stressed?: boolean;
}

export class AvatarSpeech extends voice.AudioOutput {
  #segments: Segment[] = [];

  constructor() {
    super(undefined);
  }

  /** True while speech is buffered or still arriving. */
  get speaking(): boolean {
    return this.#segments.length > 0;
  }

  override async captureFrame(frame: AudioFrame): Promise<void> {
    await super.captureFrame(frame);
    let segment = this.#segments.at(-1);
    if (!segment || segment.ended) {
      segment = {
        chunks: [],
        received: 0,
        resampler: null,
        cues: [],
        marksStress: false,
        offset: 0,
        ended: false,
        playedSamples: 0,
        started: false,
      };
      this.#segments.push(segment);
    }
    const cues = frame.userdata[VISEME_CUES] as VisemeCue[] | undefined;
    const words = frame.userdata[USERDATA_TIMED_TRANSCRIPT] as TimedWord[] | undefined;
    if (Array.isArray(cues)) {
      for (const cue of cues) segment.cues.push({ ...cue, start: cue.start + segment.received });
      segment.marksStress ||= cues.some((cue) => cue.stress);
    } else if (Array.isArray(words)) {
      // Timed words (ElevenLabs): already timed from the reply's start, not from this frame.
      segment.cues.push(...cuesFromWords(words));
    }
    segment.received += frame.samplesPerChannel / frame.sampleRate;
    const mono = frame.channels === 1 ? frame : monoFrame(frame);
    if (mono.sampleRate === AVATAR_SAMPLE_RATE) {
      segment.chunks.push(mono.data);
      return;
    }
    if (segment.resampler?.inputRate !== mono.sampleRate) {
      for (const out of segment.resampler?.flush() ?? []) segment.chunks.push(out.data);
      segment.resampler?.close();
      segment.resampler = new AudioResampler(mono.sampleRate, AVATAR_SAMPLE_RATE, 1);
    }
    for (const out of segment.resampler.push(mono)) segment.chunks.push(out.data);
  }

  override flush(): void {
    super.flush();
    const segment = this.#segments.at(-1);
    if (segment) {
      segment.ended = true;
      for (const out of segment.resampler?.flush() ?? []) segment.chunks.push(out.data);
      segment.resampler?.close();
      segment.resampler = null;
    }
    this.#finishDrainedSegments();
  }

  override clearBuffer(): void {
    // The session may clear without flushing first: close the open segment either way, so
    // the next reply counts as a new one.
    super.flush();
    const dropped = this.#segments;
    this.#segments = [];
    for (const segment of dropped) {
      segment.resampler?.close();
      this.onPlaybackFinished({ playbackPosition: segment.playedSamples / AVATAR_SAMPLE_RATE, interrupted: true });
    }
  }

  /** The next `count` samples to play: speech where there is some, then silence. */
  take(count: number): SpeechSlice {
    const samples = new Int16Array(count);
    let filled = 0;
    let visemes: Partial<Record<Viseme, number>> | undefined;
    /** Undefined unless the speech marks stress (Piper does, espeak-ng's events do not). */
    let stressed: boolean | undefined;
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
      if (segment.cues.length > 0) {
        const from = segment.playedSamples / AVATAR_SAMPLE_RATE + VISEME_LEAD_S;
        visemes ??= {};
        for (const [viseme, share] of Object.entries(visemeShares(segment.cues, from, from + n / AVATAR_SAMPLE_RATE))) {
          visemes[viseme as Viseme] = (visemes[viseme as Viseme] ?? 0) + (share * n) / count;
        }
        if (segment.marksStress) {
          // The lead skips a reply's first 20 ms: a stress there belongs to its first slice.
          const since = segment.playedSamples === 0 ? -Infinity : from;
          stressed = (stressed ?? false) || stressWithin(segment.cues, since, from + n / AVATAR_SAMPLE_RATE);
        }
      }
      filled += n;
      segment.offset += n;
      segment.playedSamples += n;
      if (segment.offset === chunk.length) {
        segment.chunks.shift();
        segment.offset = 0;
      }
      this.#finishDrainedSegments();
    }
    if (!visemes) return { samples, speechSamples: filled };
    return stressed === undefined
      ? { samples, speechSamples: filled, visemes }
      : { samples, speechSamples: filled, visemes, stressed };
  }

  #finishDrainedSegments(): void {
    while (this.#segments[0]?.ended && this.#segments[0].chunks.length === 0) {
      const segment = this.#segments.shift()!;
      this.onPlaybackFinished({ playbackPosition: segment.playedSamples / AVATAR_SAMPLE_RATE, interrupted: false });
    }
  }
}

function monoFrame(frame: AudioFrame): AudioFrame {
  const mono = new Int16Array(frame.samplesPerChannel);
  for (let i = 0; i < mono.length; i++) mono[i] = frame.data[i * frame.channels]!;
  return new AudioFrame(mono, frame.sampleRate, 1, mono.length);
}
