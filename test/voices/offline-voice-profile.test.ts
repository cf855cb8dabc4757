// The offline voice profile measured from a decoded sample: pitch and speaking rate follow the
// speaker. Real speech from espeak-ng, decoded by the same ffmpeg path as uploads.
import { describe, expect, test } from 'bun:test';
import { defaultUploadBounds, inspectAudio, MediaError } from '../../src/media/index.ts';
import { measureVoiceProfile, PROFILE_LIMITS, sampleProfile } from '../../src/voices/index.ts';
import * as fx from '../fixtures/index.ts';
import { espeakWav, SAMPLE_TEXT } from './speech.ts';

async function profileOf(wav: Uint8Array) {
  return measureVoiceProfile((await inspectAudio(wav, defaultUploadBounds)).pcm16kMono);
}

describe('voice profile', () => {
  test('a low-pitched speaker measures clearly lower than a high-pitched one', async () => {
    const low = await profileOf(await espeakWav(SAMPLE_TEXT, { pitch: 20 }));
    const high = await profileOf(await espeakWav(SAMPLE_TEXT, { pitch: 80 }));
    expect(high.pitchHz / low.pitchHz).toBeGreaterThan(1.4);
    // espeak-ng's male English voice: roughly 70–100 Hz at -p 20, 120–170 Hz at -p 80.
    expect(low.pitchHz).toBeGreaterThan(60);
    expect(low.pitchHz).toBeLessThan(110);
    expect(high.pitchHz).toBeGreaterThan(115);
    expect(high.pitchHz).toBeLessThan(200);
  });

  test('a fast speaker measures clearly faster than a slow one, in a plausible range', async () => {
    const slow = await profileOf(await espeakWav(SAMPLE_TEXT, { wordsPerMinute: 110 }));
    const fast = await profileOf(await espeakWav(SAMPLE_TEXT, { wordsPerMinute: 220 }));
    expect(fast.wordsPerMinute / slow.wordsPerMinute).toBeGreaterThan(1.35);
    expect(slow.wordsPerMinute).toBeGreaterThan(80);
    expect(slow.wordsPerMinute).toBeLessThan(170);
    expect(fast.wordsPerMinute).toBeGreaterThan(150);
  });

  test('pitch does not depend on loudness', async () => {
    const pcm = (await inspectAudio(await espeakWav(SAMPLE_TEXT, { pitch: 60 }), defaultUploadBounds)).pcm16kMono;
    const quiet = Int16Array.from(pcm, (s) => Math.round(s / 8));
    const loud = measureVoiceProfile(pcm);
    const soft = measureVoiceProfile(quiet);
    expect(Math.abs(soft.pitchHz - loud.pitchHz)).toBeLessThanOrEqual(3);
    expect(Math.abs(soft.wordsPerMinute - loud.wordsPerMinute)).toBeLessThanOrEqual(10);
  });

  test('the speech-like fixture (150 Hz ± intonation) measures near 150 Hz', async () => {
    const profile = await profileOf(fx.wav({ seconds: 10 }));
    expect(profile.pitchHz).toBeGreaterThan(130);
    expect(profile.pitchHz).toBeLessThan(180);
  });

  test('a two-minute sample is measured quickly and within the limits espeak-ng renders', async () => {
    const audio = await inspectAudio(fx.wav({ seconds: 115, sampleRate: 8000 }), defaultUploadBounds);
    const started = performance.now();
    const profile = measureVoiceProfile(audio.pcm16kMono);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(profile.pitchHz).toBeGreaterThanOrEqual(PROFILE_LIMITS.pitchHz[0]);
    expect(profile.pitchHz).toBeLessThanOrEqual(PROFILE_LIMITS.pitchHz[1]);
    expect(profile.wordsPerMinute).toBeGreaterThanOrEqual(PROFILE_LIMITS.wordsPerMinute[0]);
    expect(profile.wordsPerMinute).toBeLessThanOrEqual(PROFILE_LIMITS.wordsPerMinute[1]);
  });

  test('a silent sample is refused as audio.no_speech', async () => {
    const silent = { kind: 'audio/wav' as const, durationSeconds: 5, pcm16kMono: new Int16Array(5 * 16_000) };
    let error: unknown;
    try {
      sampleProfile(silent);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(MediaError);
    expect(error).toMatchObject({ status: 422, field: 'audio', type: 'audio.no_speech' });
  });
});
