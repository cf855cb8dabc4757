// The real ElevenLabs plugin against the wire-level fake: streamed (multi-stream-input WebSocket)
// and one-shot synthesis produce real, non-silent audio that grows with the text, and the fake
// records what the plugin sent (voice, model, language, output format, texts, contexts).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { initializeLogger, tts as ttsBase } from '@livekit/agents';
import * as elevenlabs from '@livekit/agents-plugin-elevenlabs';
import { type FakeElevenLabs, MS_PER_CHARACTER, startFakeElevenLabs } from '../support/fakes/elevenlabs.ts';

const VOICE = 'clonedVoice123';

function rmsOf(frames: { data: Int16Array }[]): number {
  let sum = 0;
  let n = 0;
  for (const frame of frames) {
    for (const s of frame.data) sum += (s / 32768) ** 2;
    n += frame.data.length;
  }
  return n ? Math.sqrt(sum / n) : 0;
}

interface Spoken {
  frames: { data: Int16Array; sampleRate: number; samplesPerChannel: number }[];
  seconds: number;
  firstFrameMs: number;
  requestId: string;
}

async function streamSpeech(tts: elevenlabs.TTS, text: string): Promise<Spoken> {
  const stream = tts.stream();
  const started = performance.now();
  stream.pushText(text);
  stream.flush();
  stream.endInput();
  const frames: Spoken['frames'] = [];
  let firstFrameMs = -1;
  let requestId = '';
  for await (const event of stream) {
    if (event === ttsBase.SynthesizeStream.END_OF_STREAM) break;
    if (firstFrameMs < 0) firstFrameMs = performance.now() - started;
    requestId = event.requestId;
    frames.push(event.frame);
    if (event.final) break;
  }
  stream.close();
  const seconds = frames.reduce((total, f) => total + f.samplesPerChannel / f.sampleRate, 0);
  return { frames, seconds, firstFrameMs, requestId };
}

describe('the ElevenLabs plugin against the fake', () => {
  let fake: FakeElevenLabs;
  let tts: elevenlabs.TTS;

  beforeAll(async () => {
    initializeLogger({ pretty: false, level: 'warn' });
    fake = await startFakeElevenLabs({ firstAudioDelayMs: 0 });
    tts = new elevenlabs.TTS({
      apiKey: 'xi-test',
      baseURL: fake.baseUrl,
      voiceId: VOICE,
      model: 'eleven_flash_v2_5',
      language: 'es',
      encoding: 'pcm_22050',
    });
  });
  afterAll(async () => {
    await tts.close();
    await fake.stop();
  });

  test('stream(): real audio at 22.05 kHz, MS_PER_CHARACTER a character, from the requested voice, model and language', async () => {
    const text = 'Hola, bienvenido al museo.';
    const spoken = await streamSpeech(tts, text);
    expect(spoken.frames.length).toBeGreaterThan(0);
    expect(spoken.frames.every((f) => f.sampleRate === 22_050)).toBe(true);
    expect(rmsOf(spoken.frames)).toBeGreaterThan(0.05);

    const connection = fake.received.connections.at(-1)!;
    expect(connection.voiceId).toBe(VOICE);
    expect(connection.apiKey).toBe('xi-test');
    expect(connection.params).toMatchObject({
      model_id: 'eleven_flash_v2_5',
      language_code: 'es',
      output_format: 'pcm_22050',
    });
    const context = fake.context(spoken.requestId);
    expect(context.texts.join('').trim()).toBe(text);
    expect(context.spoken.trim()).toBe(text);
    // The plugin sends each sentence with a trailing space, which the fake renders as a short pause.
    expect(spoken.seconds).toBeCloseTo((context.spoken.length * MS_PER_CHARACTER) / 1000, 2);
    expect(context.closedAt).toBeDefined();
    expect(context.finalAt).toBeDefined();
  });

  test('longer text gives proportionally longer audio', async () => {
    const short = await streamSpeech(tts, 'Short one.');
    const long = await streamSpeech(tts, 'This sentence is a good deal longer than the short one before it.');
    expect(long.seconds / short.seconds).toBeGreaterThan(4);
  });

  test('first audio waits for the configured latency', async () => {
    fake.firstAudioDelayMs = 400;
    try {
      const spoken = await streamSpeech(tts, 'Wait for it.');
      expect(spoken.firstFrameMs).toBeGreaterThanOrEqual(380);
      const context = fake.context(spoken.requestId);
      expect(context.firstAudioAt! - context.openedAt).toBeGreaterThanOrEqual(390);
    } finally {
      fake.firstAudioDelayMs = 0;
    }
  });

  test('several replies share one connection, each in its own context', async () => {
    const before = fake.received.connections.length;
    const a = await streamSpeech(tts, 'First reply.');
    const b = await streamSpeech(tts, 'Second reply.');
    expect(a.requestId).not.toBe(b.requestId);
    expect(fake.received.connections.length - before).toBeLessThanOrEqual(1);
    expect(fake.context(a.requestId).spoken.trim()).toBe('First reply.');
    expect(fake.context(b.requestId).spoken.trim()).toBe('Second reply.');
  });

  test('updateOptions({language}) opens a connection with the new language_code', async () => {
    tts.updateOptions({ language: 'pl' });
    await streamSpeech(tts, 'Dzień dobry.');
    expect(fake.received.connections.at(-1)!.params.language_code).toBe('pl');
  });

  test('synthesize(): the one-shot HTTP stream gives the same kind of audio', async () => {
    const oneShot = new elevenlabs.TTS({
      apiKey: 'xi-test',
      baseURL: fake.baseUrl,
      voiceId: VOICE,
      model: 'eleven_flash_v2_5',
      language: 'en',
      encoding: 'pcm_16000',
    });
    const frame = await oneShot.synthesize('Good morning, visitor.').collect();
    expect(frame.sampleRate).toBe(16_000);
    expect(frame.samplesPerChannel / 16_000).toBeCloseTo((22 * MS_PER_CHARACTER) / 1000, 1);
    expect(rmsOf([frame])).toBeGreaterThan(0.05);
    expect(fake.received.syntheses.at(-1)).toMatchObject({
      voiceId: VOICE,
      params: { output_format: 'pcm_16000' },
      body: { text: 'Good morning, visitor.', model_id: 'eleven_flash_v2_5', language_code: 'en' },
    });
    await oneShot.close();
  });

  test('a wrong key is refused', async () => {
    const strict = await startFakeElevenLabs({ apiKey: 'right' });
    try {
      const response = await fetch(`${strict.baseUrl}/voices`, { headers: { 'xi-api-key': 'wrong' } });
      expect(response.status).toBe(401);
      expect((await fetch(`${strict.baseUrl}/voices`, { headers: { 'xi-api-key': 'right' } })).status).toBe(200);
    } finally {
      await strict.stop();
    }
  });
});
