// The avatar's speech input: what the agent session says comes back out 40 ms at a time,
// in order, then silence; each reply is reported started and finished once, an interruption
// drops the rest at once and reports it interrupted, or the session would wait forever.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { initializeLogger, tts as ttsBase, USERDATA_TIMED_TRANSCRIPT, voice } from '@livekit/agents';
import * as elevenlabs from '@livekit/agents-plugin-elevenlabs';
import { AudioFrame } from '@livekit/rtc-node';
import { AvatarSpeech } from '../../agent/avatar/index.ts';
import { VISEME_CUES, type VisemeCue } from '../../agent/visemes/index.ts';
import { AVATAR_SAMPLE_RATE } from '../../src/contract/index.ts';
import { type FakeElevenLabs, startFakeElevenLabs } from '../support/fakes/elevenlabs.ts';

initializeLogger({ pretty: false, level: 'warn' });

const SLICE = AVATAR_SAMPLE_RATE / 25; // one video frame's audio

function tone(samples: number, value: number): AudioFrame {
  return new AudioFrame(new Int16Array(samples).fill(value), AVATAR_SAMPLE_RATE, 1, samples);
}

function events(speech: AvatarSpeech) {
  const started: number[] = [];
  const finished: { playbackPosition: number; interrupted: boolean }[] = [];
  speech.on(voice.AudioOutput.EVENT_PLAYBACK_STARTED, (ev: { createdAt: number }) => started.push(ev.createdAt));
  speech.on(voice.AudioOutput.EVENT_PLAYBACK_FINISHED, (ev: { playbackPosition: number; interrupted: boolean }) =>
    finished.push(ev),
  );
  return { started, finished };
}

describe('AvatarSpeech', () => {
  test('plays a reply in order across slices, then silence; started and finished once each', async () => {
    const speech = new AvatarSpeech();
    const seen = events(speech);
    await speech.captureFrame(tone(SLICE / 2, 100));
    await speech.captureFrame(tone(SLICE, 200));
    speech.flush();
    expect(seen.started).toHaveLength(0); // nothing played yet

    const first = speech.take(SLICE);
    expect(first.speechSamples).toBe(SLICE);
    expect(first.samples[0]).toBe(100);
    expect(first.samples[SLICE / 2]).toBe(200);
    expect(seen.started).toHaveLength(1);
    expect(seen.finished).toHaveLength(0);

    const second = speech.take(SLICE);
    expect(second.speechSamples).toBe(SLICE / 2);
    expect(second.samples[SLICE / 2 - 1]).toBe(200);
    expect(second.samples[SLICE / 2]).toBe(0); // then silence
    expect(seen.finished).toEqual([{ playbackPosition: 1.5 * (SLICE / AVATAR_SAMPLE_RATE), interrupted: false }]);
    expect(await speech.waitForPlayout()).toMatchObject({ interrupted: false });

    expect(speech.take(SLICE).speechSamples).toBe(0);
    expect(seen.started).toHaveLength(1);
  });

  test('an interruption drops what is left at once, reports it interrupted, and the next reply counts anew', async () => {
    const speech = new AvatarSpeech();
    const seen = events(speech);
    await speech.captureFrame(tone(SLICE * 10, 300));
    speech.take(SLICE);
    speech.take(SLICE);
    speech.clearBuffer();
    expect(seen.finished).toEqual([{ playbackPosition: 2 * (SLICE / AVATAR_SAMPLE_RATE), interrupted: true }]);
    expect(speech.take(SLICE).speechSamples).toBe(0); // the mouth closes on the next frame
    await speech.waitForPlayout();

    await speech.captureFrame(tone(SLICE, 400));
    speech.flush();
    const playout = speech.waitForPlayout();
    expect(speech.take(SLICE).samples[0]).toBe(400);
    expect(await playout).toMatchObject({ interrupted: false });
    expect(seen.finished).toHaveLength(2);
    expect(seen.started).toHaveLength(2);
  });

  test('a slice spans two replies; a reply flushed but never played is reported interrupted when cleared', async () => {
    const speech = new AvatarSpeech();
    const seen = events(speech);
    await speech.captureFrame(tone(SLICE / 4, 1));
    speech.flush();
    await speech.captureFrame(tone(SLICE, 2));
    speech.flush();
    const slice = speech.take(SLICE);
    expect(slice.samples[0]).toBe(1);
    expect(slice.samples[SLICE / 4]).toBe(2);
    expect(seen.finished.map((f) => f.interrupted)).toEqual([false]);
    await speech.captureFrame(tone(SLICE, 3));
    speech.flush();
    speech.clearBuffer();
    // The second reply (partly played) and the third (never played) both end interrupted.
    expect(seen.finished.map((f) => f.interrupted)).toEqual([false, true, true]);
    await speech.waitForPlayout();
  });

  test("a TTS's own rate is resampled to the avatar's, the speech keeping its length", async () => {
    const speech = new AvatarSpeech();
    const rate = 22_050;
    // One second of a 441 Hz tone, in 100 ms frames as the offline TTS yields them.
    for (let f = 0; f < 10; f++) {
      const data = new Int16Array(rate / 10);
      for (let i = 0; i < data.length; i++)
        data[i] = Math.round(8000 * Math.sin((2 * Math.PI * 441 * (f * data.length + i)) / rate));
      await speech.captureFrame(new AudioFrame(data, rate, 1, data.length));
    }
    speech.flush();
    let speechSamples = 0;
    let peak = 0;
    for (let slice = speech.take(SLICE); slice.speechSamples > 0; slice = speech.take(SLICE)) {
      speechSamples += slice.speechSamples;
      for (const sample of slice.samples) peak = Math.max(peak, Math.abs(sample));
    }
    expect(Math.abs(speechSamples - AVATAR_SAMPLE_RATE)).toBeLessThan(AVATAR_SAMPLE_RATE * 0.01);
    expect(peak).toBeGreaterThan(7000); // the tone, not silence or clipping
    expect(peak).toBeLessThan(8800);
  });

  test('viseme cues travel with their audio to the slice that plays them, and an interruption drops both', async () => {
    const speech = new AvatarSpeech();
    const rate = 24_000;
    const frame = (seconds: number, cues?: VisemeCue[]) => {
      const samples = Math.round(seconds * rate);
      const audio = new AudioFrame(new Int16Array(samples).fill(1000), rate, 1, samples);
      if (cues) audio.userdata[VISEME_CUES] = cues;
      return audio;
    };
    // 0–0.2 s a stressed "a" (from the first frame), 0.2–0.3 s "m" (cue in the second frame, at its 0.1 s).
    await speech.captureFrame(frame(0.1, [{ viseme: 'open', start: 0, duration: 0.2, stress: true }]));
    await speech.captureFrame(frame(0.2, [{ viseme: 'closed', start: 0.1, duration: 0.1 }]));
    speech.flush();
    const slices = Array.from({ length: 8 }, () => speech.take(SLICE));
    // Slice k covers k·40 ms…(k+1)·40 ms, seen 20 ms ahead (lips lead the sound).
    expect(slices[0]!.visemes).toEqual({ open: 1 });
    // The stressed syllable starts the reply: its first slice says so, no other.
    expect(slices.map((slice) => slice.stressed)).toEqual([true, false, false, false, false, false, false, false]);
    expect(slices[4]!.visemes?.open).toBeCloseTo(0.5, 1);
    expect(slices[4]!.visemes?.closed).toBeCloseTo(0.5, 1);
    expect(slices[5]!.visemes).toEqual({ closed: 1 });
    // Past the cues the speech goes on without a shape; after it, silence has none either.
    expect(slices[7]!.speechSamples).toBeLessThan(SLICE);
    expect(speech.take(SLICE).visemes).toBeUndefined();

    await speech.captureFrame(frame(0.4, [{ viseme: 'round', start: 0, duration: 0.4 }]));
    expect(speech.take(SLICE).visemes).toEqual({ round: 1 });
    speech.clearBuffer();
    // The next reply comes without cues (espeak-ng, a cloud voice): none of the old ones linger.
    await speech.captureFrame(frame(0.2));
    speech.flush();
    const next = speech.take(SLICE);
    expect(next.speechSamples).toBe(SLICE);
    expect(next.visemes).toBeUndefined();
  });
});

describe('AvatarSpeech with a voice that times words (ElevenLabs)', () => {
  let fake: FakeElevenLabs;
  beforeAll(async () => {
    fake = await startFakeElevenLabs({ firstAudioDelayMs: 0 });
  });
  afterAll(() => fake.stop());

  test('the plugin’s timed words become visemes on the slices: pressed and open lips alternate', async () => {
    const tts = new elevenlabs.TTS({
      apiKey: 'xi-test',
      baseURL: fake.baseUrl,
      voiceId: 'v1',
      model: 'eleven_flash_v2_5',
      language: 'en',
      encoding: 'pcm_22050',
    });
    const speech = new AvatarSpeech();
    const stream = tts.stream();
    stream.pushText('Mama, papa, bob, mama, papa, bob, mama, papa, bob, mama, papa, bob, mama. ');
    stream.flush();
    stream.endInput();
    let timedWords = 0;
    for await (const event of stream) {
      if (event === ttsBase.SynthesizeStream.END_OF_STREAM) break;
      // What agents' default tts node does with each chunk before the audio output sees it.
      if (event.timedTranscripts?.length) {
        event.frame.userdata[USERDATA_TIMED_TRANSCRIPT] = event.timedTranscripts;
        timedWords += event.timedTranscripts.length;
      }
      await speech.captureFrame(event.frame);
      if (event.final) break;
    }
    stream.close();
    await tts.close();
    speech.flush();
    expect(timedWords).toBeGreaterThan(5);

    const slices = [];
    for (let slice = speech.take(SLICE); slice.speechSamples > 0; slice = speech.take(SLICE)) slices.push(slice);
    expect(slices.length).toBeGreaterThan(50);
    // Every timed slice says what the lips do; the words are all m/b/p and vowels, so the lips
    // alternate: pressed on some slices, open on others (loudness alone cannot tell them apart:
    // the fake's voice is equally loud throughout).
    const timed = slices.filter((s) => s.visemes);
    expect(timed.length).toBeGreaterThan(slices.length * 0.6);
    const pressed = timed.filter((s) => (s.visemes!.closed ?? 0) >= 0.3).length;
    const open = timed.filter((s) => (s.visemes!.open ?? 0) >= 0.3).length;
    expect(pressed).toBeGreaterThan(timed.length * 0.2);
    expect(open).toBeGreaterThan(timed.length * 0.2);
  }, 30_000);
});
