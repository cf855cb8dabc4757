// Captions timed to what the visitor hears (docs/api.md#captions-and-state). agents 1.9's
// transcription synchronizer (RoomIO's TranscriptionSynchronizer, around the session's audio
// output) paces each reply's `lk.transcription` text against a clock started at the reply's
// playback start, with the TTS's timing (ElevenLabs' alignment; our offline voices and any
// other TTS through agents' StreamAdapter, by sentence or clause) or a standard speaking rate.
// Its first segment waits for our audio output's playback start (agent/avatar/speech.ts: the
// runner took its first sample), but every later one starts its clock when its first frame is
// merely captured (`seedFromPushAudio`), and then ignores the playback start with a warning. Our
// avatar buffers a reply and plays it in real time, after what plays before it, and the
// visitor hears it a moment later still: the captions ran ahead of the voice (measured: 270 ms
// at a reply's first word). Here every segment's clock starts at the playback start, moved to
// when the visitor hears it, and each word goes out when the TTS's timing reaches it. An audio
// output that never reports a playback start would hold a segment's captions to its end.
import { voice } from '@livekit/agents';

/**
 * From our runner taking a sample to the visitor hearing it: the audio source's lead (20–60 ms,
 * agent/avatar/runner.ts), LiveKit's queue, Opus's 20 ms frames and the client's jitter buffer.
 * Measured at an rtc-node visitor on the same host: 235–275 ms (captions-and-state.test.ts,
 * every word 112–156 ms early with 120); a browser's buffer adds a little, and a caption a
 * moment late reads better than one ahead of the voice.
 */
export const HEARD_AFTER_PLAYED_MS = 260;

/** What the synchronizer keeps of a segment (agents' SegmentSynchronizerImpl, private). */
interface SegmentClock {
  seedFromPushAudio: boolean;
  startWallTime?: number;
  startFuture: { done: boolean };
  closed: boolean;
  onPlaybackStarted(startTime: number): void;
  sleepIfNotClosed(seconds: number): Promise<void>;
  synchronizedElapsedSeconds(): number | undefined;
  textData: { pushedText: string; forwardedText: string };
  audioData: { annotatedRate: { pushedDuration: number; accumulateTo(seconds: number): number } | null };
}

interface Synchronizer {
  _impl?: SegmentClock;
  enabled: boolean;
  outputsAttached: boolean;
}

interface SyncedAudioOutput {
  synchronizer?: Synchronizer;
  onPlaybackStarted(createdAt: number): void;
}

/** Steps of the search for when the TTS's timing reaches a word. */
const TIMING_STEP_S = 0.01;

/**
 * Each word is sent when the TTS's timing says its sound begins. agents' pacing, with timing
 * or without, waits half a word's length at a standard syllable rate, sends it, then waits the
 * other half (its only two sleeps, around each word): a long word came mid-sound, the next
 * short one early (measured: "museum" +270 ms, "in" −150 ms). With the TTS's timing, the wait
 * before a word now lasts until the timing reaches its first character, and none follows it.
 * Without timing (a TTS that gives none) agents' pace stands.
 */
function sendWordsAsHeard(clock: SegmentClock): void {
  const sleep = clock.sleepIfNotClosed.bind(clock);
  let beforeWord = true;
  clock.sleepIfNotClosed = (seconds: number) => {
    const before = beforeWord;
    beforeWord = !beforeWord;
    const timing = clock.audioData.annotatedRate;
    const elapsed = clock.synchronizedElapsedSeconds();
    if (!timing || elapsed === undefined) return sleep(seconds);
    if (!before) return sleep(0);
    const text = clock.textData.pushedText;
    let first = clock.textData.forwardedText.length;
    while (first < text.length && /\s/.test(text[first]!)) first++;
    let at = Math.max(0, elapsed);
    while (at < timing.pushedDuration && timing.accumulateTo(at) < first) at += TIMING_STEP_S;
    // Timed no further yet (the TTS is still speaking): agents' own wait on top.
    const beyond = timing.accumulateTo(at) < first ? seconds : 0;
    return sleep(Math.max(0, at - elapsed) + beyond);
  };
}

/** Applies `adjust` to the segment the synchronizer holds and to each one it starts later. */
function everySegment(synchronizer: Synchronizer, adjust: (clock: SegmentClock) => void): void {
  let current = synchronizer._impl;
  if (current) adjust(current);
  Object.defineProperty(synchronizer, '_impl', {
    configurable: true,
    get: () => current,
    set: (clock: SegmentClock | undefined) => {
      if (clock) adjust(clock);
      current = clock;
    },
  });
}

/**
 * Makes the session's caption synchronizer (its audio output, once the session started) count
 * each reply from when the visitor hears it. A session without one (transcription off, or a
 * version that changed it) is left as it is: the captions then run as agents times them.
 */
export function syncCaptionsToPlayback(session: voice.AgentSession): boolean {
  const output = session.output.audio as unknown as SyncedAudioOutput | null;
  const synchronizer = output?.synchronizer;
  if (!output || !synchronizer || typeof output.onPlaybackStarted !== 'function') return false;
  if (typeof synchronizer._impl?.sleepIfNotClosed !== 'function') return false;
  everySegment(synchronizer, (clock) => {
    // Started by the playback start alone, never by a frame merely captured.
    clock.seedFromPushAudio = false;
    sendWordsAsHeard(clock);
  });
  output.onPlaybackStarted = (createdAt: number) => {
    // The event for the session (the agent's state), as agents' own output sends it.
    voice.AudioOutput.prototype.onPlaybackStarted.call(output, createdAt);
    const clock = synchronizer._impl;
    if (!clock || clock.closed || !synchronizer.enabled || !synchronizer.outputsAttached) return;
    const heardAt = createdAt + HEARD_AFTER_PLAYED_MS;
    if (clock.startFuture.done) clock.startWallTime = heardAt;
    else clock.onPlaybackStarted(heardAt);
  };
  return true;
}
