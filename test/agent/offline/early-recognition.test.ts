// The offline recogniser asked from the first pause that may end an utterance
// (agent/providers/offline/early-recognition.ts, issue 45 point 4): agents' VAD (its real
// Silero model) cuts espeak-ng's speech, a recorder stands in for Whisper. Order, not time, is
// what is checked: the words are asked for before the VAD ends the utterance and are the ones
// the session gets; a pause the visitor speaks through drops the early answer, and the
// utterance's words cover all of it.
import { beforeAll, describe, expect, test } from 'bun:test';
import { type AudioBuffer, inference, initializeLogger, stt } from '@livekit/agents';
import { AudioFrame } from '@livekit/rtc-node';
import { EarlyRecognition } from '../../../agent/providers/offline/early-recognition.ts';
import { espeak } from '../../support/fakes/speech.ts';

beforeAll(() => initializeLogger({ pretty: false, level: 'warn' }));

const RATE = 16_000;
const FRAME = RATE / 100; // 10 ms

/** Stands in for Whisper: says how much audio it was given, and logs each ask in `log`. */
class AudioLengthRecogniser extends stt.STT {
  label = 'test.AudioLength';
  readonly asked: { ms: number; aborted: () => boolean; atAudioMs: number }[] = [];

  constructor(
    readonly log: string[],
    /** How much audio the test has pushed so far, in ms (its clock). */
    readonly pushedMs: () => number,
  ) {
    super({ streaming: false, interimResults: false });
  }

  protected async _recognize(buffer: AudioBuffer, abortSignal?: AbortSignal): Promise<stt.SpeechEvent> {
    const frames = Array.isArray(buffer) ? buffer : [buffer];
    const ms = Math.round(frames.reduce((sum, f) => sum + f.samplesPerChannel, 0) / (RATE / 1000));
    this.asked.push({ ms, aborted: () => abortSignal?.aborted ?? false, atAudioMs: this.pushedMs() });
    this.log.push(`asked ${ms}`);
    await Bun.sleep(5);
    return {
      type: stt.SpeechEventType.FINAL_TRANSCRIPT,
      alternatives: [{ text: `${ms} ms`, language: 'en' as never, startTime: 0, endTime: ms / 1000, confidence: 1 }],
    };
  }

  stream(): stt.SpeechStream {
    throw new Error('not streaming');
  }
}

const silence = (ms: number) => new Int16Array((RATE / 1000) * ms);

/** The test's clock: audio pushed so far. */
let pushedMs = 0;

/**
 * Pushes `pcm` in 10 ms frames (the last second in real time, so that what the stream does
 * in the pause is placed on the audio's clock), waits for the VAD to end the utterance and its words to come,
 * and collects what the stream says in `log`. (Not endInput: agents' VADStream rejects it while
 * its writer is held, as it is once audio was pushed.)
 */
async function hear(pcm: Int16Array, log: string[], recogniser: AudioLengthRecogniser) {
  const stream = new EarlyRecognition(recogniser, new inference.VAD()).stream();
  const finals: string[] = [];
  let endAtAudioMs = -1;
  pushedMs = 0;
  const reading = (async () => {
    for await (const event of stream) {
      if (event.type === stt.SpeechEventType.END_OF_SPEECH) {
        log.push('end of speech');
        endAtAudioMs = pushedMs;
      }
      if (event.type === stt.SpeechEventType.START_OF_SPEECH) log.push('start of speech');
      if (event.type === stt.SpeechEventType.FINAL_TRANSCRIPT) {
        const text = event.alternatives![0]!.text;
        log.push(`final ${text}`);
        finals.push(text);
      }
    }
  })();
  for (let at = 0; at + FRAME <= pcm.length; at += FRAME) {
    stream.pushFrame(new AudioFrame(pcm.slice(at, at + FRAME), RATE, 1, FRAME));
    pushedMs += 10;
    if (pcm.length - at <= RATE) await Bun.sleep(10);
    // The VAD reads as audio comes; a pause now and then lets it keep up as it would live.
    else if ((at / FRAME) % 10 === 0) await Bun.sleep(1);
  }
  for (let waited = 0; waited < 5_000 && (finals.length === 0 || !log.includes('end of speech')); waited += 50)
    await Bun.sleep(50);
  await Bun.sleep(200);
  stream.close();
  await reading.catch(() => undefined);
  return { finals, endAtAudioMs };
}

/** `text` in espeak-ng's voice, without the silence it leads and ends with. */
async function sentence(text: string): Promise<Int16Array> {
  const { samples } = await espeak(text, { voice: 'en-us', wordsPerMinute: 150, sampleRate: RATE });
  const loud = (i: number) => Math.abs(samples[i]!) > 300;
  let start = 0;
  while (start < samples.length && !loud(start)) start++;
  let end = samples.length;
  while (end > start && !loud(end - 1)) end--;
  return samples.slice(start, end);
}

describe('the offline recogniser, asked in the pause', () => {
  test('an utterance followed by silence: its words are asked for before the VAD ends it, once, and used', async () => {
    const log: string[] = [];
    const recogniser = new AudioLengthRecogniser(log, () => pushedMs);
    const spoken = await sentence('What is the weather like in Paris today?');
    const pcm = new Int16Array(spoken.length + silence(1_000).length);
    pcm.set(spoken);
    const { finals, endAtAudioMs } = await hear(pcm, log, recogniser);

    expect(finals).toHaveLength(1);
    expect(recogniser.asked).toHaveLength(1);
    // Asked in the pause, ~0.2 s of audio before the VAD ended the utterance, and the answer
    // given is that early one's.
    expect(endAtAudioMs).toBeGreaterThan(0);
    expect(recogniser.asked[0]!.atAudioMs).toBeLessThanOrEqual(endAtAudioMs - 120);
    expect(finals[0]).toBe(`${recogniser.asked[0]!.ms} ms`);
    // It holds the whole sentence (the VAD's padding before, the pause's start after).
    const spokenMs = spoken.length / (RATE / 1000);
    expect(recogniser.asked[0]!.ms).toBeGreaterThanOrEqual(spokenMs - 300);
    expect(recogniser.asked[0]!.ms).toBeLessThanOrEqual(spokenMs + 500 + 250);
  });

  test('a pause the visitor speaks through: the early answer is dropped, the words cover both parts', async () => {
    const log: string[] = [];
    const recogniser = new AudioLengthRecogniser(log, () => pushedMs);
    const first = await sentence('I would like to know');
    const second = await sentence('the opening hours on Sunday.');
    // 260 ms: quiet to Silero from ~0.15 s in, while the VAD (its silence count starts later)
    // counts less than its 250 ms end.
    const pause = silence(260);
    const pcm = new Int16Array(first.length + pause.length + second.length + silence(1_000).length);
    pcm.set(first);
    pcm.set(second, first.length + pause.length);
    const { finals } = await hear(pcm, log, recogniser);

    expect(log.filter((line) => line === 'end of speech')).toHaveLength(1);
    expect(finals).toHaveLength(1);
    const spokenMs = (first.length + pause.length + second.length) / (RATE / 1000);
    const [final] = finals;
    expect(Number.parseInt(final!, 10)).toBeGreaterThanOrEqual(spokenMs - 300);
    // More than one ask: the pause's own, aborted when the visitor went on.
    expect(recogniser.asked.length).toBeGreaterThanOrEqual(2);
    const dropped = recogniser.asked.filter((ask) => ask.aborted());
    expect(dropped.length).toBeGreaterThanOrEqual(1);
    expect(dropped.every((ask) => ask.ms < spokenMs - 500)).toBe(true);
  });
});
