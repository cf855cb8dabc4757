// The Deepgram fake against the real @livekit/agents-plugin-deepgram 1.9: a spoken WAV goes in,
// the scripted transcript comes back with its language, and the fake saw what the plugin sent.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { initializeLogger, stt } from '@livekit/agents';
import * as deepgram from '@livekit/agents-plugin-deepgram';
import { AudioFrame } from '@livekit/rtc-node';
import { type FakeDeepgram, startFakeDeepgram } from '../support/fakes/deepgram.ts';
import { espeak, type Pcm, silence } from '../support/fakes/speech.ts';
import { eventually } from '../support/visitor.ts';

const API_KEY = 'dg-test-key';
// espeak-ng pauses ~490 ms after a sentence at 130 wpm: a shorter endpointing splits the phrase.
const ENDPOINTING_MS = 600;
const SPANISH = 'Buenos días. Me gustaría saber qué tiempo hará mañana en Madrid, por favor.';
let fake: FakeDeepgram;
let spanish: Pcm;
let english: Pcm;

beforeAll(async () => {
  initializeLogger({ pretty: false, level: 'warn' });
  fake = startFakeDeepgram({ apiKey: API_KEY });
  [spanish, english] = await Promise.all([
    espeak(SPANISH, { voice: 'es', wordsPerMinute: 130 }),
    espeak('Hello there, can you hear me?'),
  ]);
});
afterAll(() => fake.stop());

/** Pushes PCM as 10 ms frames; `realtime` paces them like a microphone. */
async function push(stream: stt.SpeechStream, pcm: Pcm, realtime = false) {
  const size = pcm.sampleRate / 100;
  const started = performance.now();
  for (let i = 0; i + size <= pcm.samples.length; i += size) {
    stream.pushFrame(new AudioFrame(pcm.samples.slice(i, i + size), pcm.sampleRate, 1, size));
    if (realtime && i % (size * 10) === 0) {
      const due = started + (i / pcm.sampleRate) * 1000;
      if (due > performance.now()) await Bun.sleep(due - performance.now());
    }
  }
}

/** Collects events until `until` says stop (or the stream ends). */
async function collect(stream: stt.SpeechStream, until: (events: stt.SpeechEvent[]) => boolean, timeoutMs = 15_000) {
  const events: stt.SpeechEvent[] = [];
  const timer = setTimeout(() => stream.close(), timeoutMs);
  for await (const event of stream) {
    events.push(event);
    if (until(events)) break;
  }
  clearTimeout(timer);
  return events;
}

const finals = (events: stt.SpeechEvent[]) => events.filter((e) => e.type === stt.SpeechEventType.FINAL_TRANSCRIPT);
const hasEnded = (events: stt.SpeechEvent[]) => events.some((e) => e.type === stt.SpeechEventType.END_OF_SPEECH);

function newStt(language: string) {
  return new deepgram.STT({
    apiKey: API_KEY,
    baseUrl: fake.url,
    language,
    model: 'nova-3',
    endpointing: ENDPOINTING_MS,
    utteranceEndMs: 1000,
  });
}

/**
 * The Spanish sentence and a second of silence through the plugin for `language`, the fake
 * scripted to answer it in Spanish: the plugin's events, and where the fake's connection is.
 */
async function spanishThrough(language: string) {
  const before = fake.connections.length;
  fake.script({ transcript: SPANISH, language: 'es' });
  const stream = newStt(language).stream();
  await push(stream, spanish);
  await push(stream, silence(1, 16_000));
  const events = await collect(stream, hasEnded);
  stream.close();
  return { before, events };
}

describe('fake Deepgram with the real plugin', () => {
  test('pinned Spanish: the scripted final arrives in Spanish and the fake saw language=es', async () => {
    const { before, events } = await spanishThrough('es');

    const types = events.map((e) => e.type);
    expect(types).toContain(stt.SpeechEventType.START_OF_SPEECH);
    expect(types).toContain(stt.SpeechEventType.INTERIM_TRANSCRIPT);
    expect(types.indexOf(stt.SpeechEventType.START_OF_SPEECH)).toBeLessThan(
      types.indexOf(stt.SpeechEventType.FINAL_TRANSCRIPT),
    );
    const [final] = finals(events);
    expect(final?.alternatives?.[0]?.text).toBe(SPANISH);
    expect(String(final?.alternatives?.[0]?.language)).toBe('es');

    const connection = fake.connections[before]!;
    expect(connection.params).toMatchObject({
      language: 'es',
      model: 'nova-3',
      encoding: 'linear16',
      sample_rate: '16000',
      endpointing: String(ENDPOINTING_MS),
      vad_events: 'true',
      interim_results: 'true',
    });
    expect(connection.authorization).toBe(`Token ${API_KEY}`);
    // All the speech arrived (silence past the plugin's 1 s energy cooldown is not sent).
    const spoken = spanish.samples.length / 16_000;
    expect(connection.audioSeconds).toBeGreaterThan(spoken);
    expect(connection.audioSeconds).toBeLessThan(spoken + 1.2);
    const [utterance] = connection.utterances;
    expect(utterance?.transcript).toBe(SPANISH);
    expect(connection.utterances).toHaveLength(1);
    expect(utterance?.audioStart).toBeLessThan(0.2);
    expect(utterance?.audioEnd).toBeGreaterThan(spoken - 0.6); // espeak-ng ends with ~0.5 s of silence
    expect(utterance?.audioEnd).toBeLessThanOrEqual(spoken);
  });

  test('auto (nova-3 multi): the language is detected from the fake, and the fake saw language=multi', async () => {
    const { before, events } = await spanishThrough('multi');
    expect(finals(events)[0]?.alternatives?.[0]).toMatchObject({ text: SPANISH, language: 'es' });
    expect(fake.connections[before]!.params.language).toBe('multi');
  });

  test('follows the energy: silence gives nothing, two phrases give two finals, then the default transcript', async () => {
    const before = fake.connections.length;
    fake.script({ transcript: 'First thing.' }, { transcript: 'Second thing.' });
    const stream = newStt('en').stream();
    await push(stream, silence(2, 16_000));
    await Bun.sleep(400);
    expect(fake.connections[before]?.utterances ?? []).toEqual([]);
    for (let i = 0; i < 3; i++) {
      await push(stream, english);
      await push(stream, silence(0.6, 16_000));
    }
    const events = await collect(stream, (e) => finals(e).length === 3);
    stream.close();
    expect(finals(events).map((e) => e.alternatives?.[0]?.text)).toEqual([
      'First thing.',
      'Second thing.',
      'Hello, how are you today?',
    ]);
    expect(fake.connections[before]!.utterances.map((u) => u.language)).toEqual(['en', 'en', 'en']);
  });

  test('Finalize flushes the speech heard so far; CloseStream ends the connection cleanly', async () => {
    const before = fake.connections.length;
    fake.script({ transcript: 'Cut short.' });
    const stream = newStt('en').stream();
    await push(stream, english);
    stream.flush();
    const events = await collect(stream, (e) => finals(e).length === 1);
    expect(finals(events)[0]?.alternatives?.[0]?.text).toBe('Cut short.');
    const connection = fake.connections[before]!;
    expect(connection.controlMessages).toContain('Finalize');
    const final = connection.sent.find((s) => s.message.is_final === true)?.message;
    expect(final).toMatchObject({ from_finalize: true, speech_final: false });
    stream.endInput();
    await collect(stream, () => false);
    // The plugin closes its socket right after CloseStream, so wait for the fake's side.
    await eventually(() => connection.closedAt, 5_000, 'the connection to close');
    expect(connection.controlMessages).toContain('CloseStream');
    expect(connection.closeCode).toBe(1000);
  });

  test('latency: the final leaves endpointing + finalDelayMs after the speech ends (audio paced in real time)', async () => {
    fake.finalDelayMs = 200;
    try {
      const before = fake.connections.length;
      const stream = newStt('en').stream();
      await push(stream, english, true);
      await push(stream, silence(1, 16_000), true);
      await collect(stream, hasEnded);
      stream.close();
      const [utterance] = fake.connections[before]!.utterances;
      const latency = utterance!.finalSentAt! - utterance!.speechEndedAt;
      // The fake counts silence in audio time; the plugin's sends bunch up on a busy machine (the
      // last speech late, the silence right behind it: 667 ms beside a CPU hog), hence the slack.
      // A fake that ignored endpointing would answer ~200 ms after the speech.
      expect(latency).toBeGreaterThanOrEqual(ENDPOINTING_MS + 200 - 150);
      expect(latency).toBeLessThan(ENDPOINTING_MS + 200 + 400);
    } finally {
      fake.finalDelayMs = 0;
    }
  });

  test('a wrong key is refused at the handshake', async () => {
    const bad = new deepgram.STT({ apiKey: 'wrong', baseUrl: fake.url, language: 'en', model: 'nova-3' });
    const errors: unknown[] = [];
    bad.on('error', (e) => errors.push(e.error));
    const stream = bad.stream({ connOptions: { maxRetry: 0, retryIntervalMs: 0, timeoutMs: 5_000 } });
    const before = fake.connections.length;
    await collect(stream, () => false, 10_000);
    expect(errors.length).toBe(1);
    expect(String(errors[0])).toContain('401');
    expect(fake.connections.length).toBe(before);
  });
});
