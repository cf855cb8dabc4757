// The OpenAI fake against the real @livekit/agents-plugin-openai 1.9: the LLM streams the
// responder's reply and the fake saw the instructions and image parts; barge-in aborts the
// stream; the STT and TTS go through /audio/*.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { initializeLogger, llm } from '@livekit/agents';
import * as openai from '@livekit/agents-plugin-openai';
import { AudioFrame } from '@livekit/rtc-node';
import { type FakeOpenAI, startFakeOpenAI } from '../support/fakes/openai.ts';
import { espeak, type Pcm, rms, wavFile } from '../support/fakes/speech.ts';
import { eventually } from '../support/visitor.ts';

const API_KEY = 'sk-test-key';
const MODEL = 'gpt-4o-mini';
// A 1×1 JPEG is enough: the plugin forwards data URLs as they are.
const JPEG_DATA_URL = `data:image/jpeg;base64,${Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1, 0xff, 0xd9]).toString('base64')}`;
const SPANISH = 'Buenos días. Me gustaría saber qué tiempo hará mañana en Madrid, por favor.';

let fake: FakeOpenAI;
let spanish: Pcm;

beforeAll(async () => {
  initializeLogger({ pretty: false, level: 'warn' });
  fake = startFakeOpenAI({ apiKey: API_KEY });
  spanish = await espeak(SPANISH, { voice: 'es', wordsPerMinute: 130 });
});
afterAll(() => fake.stop());

const newLlm = (apiKey = API_KEY) => new openai.LLM({ apiKey, baseURL: fake.url, model: MODEL });

function conversation(withImage: boolean) {
  const chatCtx = new llm.ChatContext();
  chatCtx.addMessage({ role: 'system', content: 'You are Ana. Answer only in Spanish.' });
  chatCtx.addMessage({
    role: 'user',
    content: withImage
      ? ['What am I holding?', llm.createImageContent({ image: JPEG_DATA_URL })]
      : 'What am I holding?',
  });
  return chatCtx;
}

describe('fake OpenAI chat completions with the real LLM plugin', () => {
  test('streams the responder reply word by word; the fake saw instructions, the user text and the image', async () => {
    fake.respond((request) => `You asked: ${request.userTexts.at(-1)} It looks like a red mug.`);
    fake.firstTokenDelayMs = 150;
    const before = fake.chats.length;
    const chunks: llm.ChatChunk[] = [];
    try {
      for await (const chunk of newLlm().chat({ chatCtx: conversation(true) })) chunks.push(chunk);
    } finally {
      fake.firstTokenDelayMs = 0;
    }
    const text = chunks.map((c) => c.delta?.content ?? '').join('');
    expect(text).toBe('You asked: What am I holding? It looks like a red mug.');
    expect(chunks.filter((c) => c.delta?.content).length).toBe(text.split(' ').length);
    expect(chunks.find((c) => c.usage)?.usage?.completionTokens).toBe(text.split(' ').length);

    const chat = fake.chats[before]!;
    expect(chat).toMatchObject({
      model: MODEL,
      stream: true,
      includeUsage: true,
      authorization: `Bearer ${API_KEY}`,
      aborted: false,
    });
    expect(chat.system).toBe('You are Ana. Answer only in Spanish.');
    expect(chat.userTexts).toEqual(['What am I holding?']);
    expect(chat.images).toEqual([{ messageIndex: 1, prefix: 'data:image/jpeg;base64,', length: JPEG_DATA_URL.length }]);
    expect(chat.firstTokenAt! - chat.at).toBeGreaterThanOrEqual(140);
    expect(chat.chunksSent).toBe(chat.tokens);
  });

  test('no image in the context, no image part on the wire', async () => {
    fake.respond(() => 'Nothing to see.');
    const before = fake.chats.length;
    const reply = await collectText(newLlm().chat({ chatCtx: conversation(false) }));
    expect(reply).toBe('Nothing to see.');
    expect(fake.chats[before]!.images).toEqual([]);
    expect(fake.chats[before]!.userTexts).toEqual(['What am I holding?']);
  });

  test('barge-in: closing the stream mid-reply aborts the request and the fake stops writing', async () => {
    const long = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    fake.respond(() => long);
    fake.tokenIntervalMs = 50;
    const before = fake.chats.length;
    try {
      const stream = newLlm().chat({ chatCtx: conversation(false) });
      let received = 0;
      for await (const chunk of stream) {
        if (chunk.delta?.content && ++received === 3) break;
      }
      stream.close();
      const chat = fake.chats[before]!;
      await eventually(() => chat.aborted, 5_000, 'the fake to see the abort');
      const sentAtAbort = chat.chunksSent;
      await Bun.sleep(300);
      expect(chat.chunksSent).toBe(sentAtAbort);
      expect(chat.chunksSent).toBeLessThan(10);
      expect(chat.finishedAt).toBeUndefined();
    } finally {
      fake.tokenIntervalMs = 0;
    }
  });

  test('prewarm lists the models; a non-streaming completion has the same reply; a wrong key gets 401', async () => {
    const model = newLlm();
    model.prewarm();
    await eventually(() => fake.requests.includes('GET /v1/models'), 5_000, 'GET /v1/models');

    fake.respond(() => 'Plain answer.');
    const plain = await fetch(`${fake.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const completion = (await plain.json()) as {
      object: string;
      choices: { message: { content: string }; finish_reason: string }[];
    };
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]).toMatchObject({ message: { content: 'Plain answer.' }, finish_reason: 'stop' });

    // The plugin reports failures as the LLM's 'error' event and ends the stream empty.
    const before = fake.chats.length;
    const refused = newLlm('sk-wrong');
    const errors: unknown[] = [];
    refused.on('error', (e) => errors.push(e.error));
    const stream = refused.chat({
      chatCtx: conversation(false),
      connOptions: { maxRetry: 0, retryIntervalMs: 0, timeoutMs: 5_000 },
    });
    expect(await collectText(stream)).toBe('');
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toMatch(/401|Incorrect API key/);
    expect(fake.chats.length).toBe(before);
  });
});

describe('fake OpenAI audio with the real STT and TTS plugins', () => {
  const frames = (pcm: Pcm) => {
    const size = pcm.sampleRate / 10;
    const out: AudioFrame[] = [];
    for (let i = 0; i + size <= pcm.samples.length; i += size)
      out.push(new AudioFrame(pcm.samples.slice(i, i + size), pcm.sampleRate, 1, size));
    return out;
  };

  test('transcriptions: pinned Spanish sends language=es; auto reports the scripted language', async () => {
    const before = fake.transcriptions.length;
    fake.scriptTranscriptions({ transcript: SPANISH, language: 'es' }, { transcript: SPANISH, language: 'es' });
    const pinned = new openai.STT({
      apiKey: API_KEY,
      baseURL: fake.url,
      model: 'whisper-1',
      useRealtime: false,
      language: 'es',
    });
    const auto = new openai.STT({
      apiKey: API_KEY,
      baseURL: fake.url,
      model: 'whisper-1',
      useRealtime: false,
      detectLanguage: true,
    });
    for (const stt of [pinned, auto]) {
      const event = await stt.recognize(frames(spanish));
      expect(event.alternatives?.[0]?.text).toBe(SPANISH);
      expect(String(event.alternatives?.[0]?.language)).toBe('es');
    }
    const [first, second] = fake.transcriptions.slice(before);
    expect(first).toMatchObject({
      model: 'whisper-1',
      language: 'es',
      responseFormat: 'json',
      fileName: 'audio.wav',
      authorization: `Bearer ${API_KEY}`,
    });
    expect(second!.language).toBeUndefined();
    const spoken = spanish.samples.length / spanish.sampleRate;
    expect(first!.audioSeconds).toBeGreaterThan(spoken - 0.1);
    expect(first!.audioSeconds).toBeLessThanOrEqual(spoken);
  });

  test('transcriptions: verbose_json names the language as Whisper does', async () => {
    fake.scriptTranscriptions({ transcript: 'Dzień dobry.', language: 'pl' });
    const form = new FormData();
    form.set('file', new File([wavFile(spanish)], 'speech.wav', { type: 'audio/wav' }));
    form.set('model', 'whisper-1');
    form.set('response_format', 'verbose_json');
    const response = await fetch(`${fake.url}/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}` },
      body: form,
    });
    expect(await response.json()).toMatchObject({ task: 'transcribe', language: 'polish', text: 'Dzień dobry.' });
  });

  test('speech: real, non-silent PCM at 24 kHz that grows with the text', async () => {
    const tts = new openai.TTS({ apiKey: API_KEY, baseURL: fake.url, model: 'tts-1', voice: 'nova' });
    const seconds = async (text: string) => {
      const audio: AudioFrame[] = [];
      for await (const chunk of tts.synthesize(text)) audio.push(chunk.frame);
      expect(audio.every((f) => f.sampleRate === 24_000 && f.channels === 1)).toBe(true);
      const samples = Int16Array.from(audio.flatMap((f) => Array.from(f.data)));
      expect(rms(samples)).toBeGreaterThan(0.05);
      return samples.length / 24_000;
    };
    const before = fake.speeches.length;
    const short = await seconds('Hi.');
    const long = await seconds('Hello there, it is very nice to meet you today.');
    expect(long).toBeGreaterThan(short * 3);
    expect(fake.speeches.slice(before).map((s) => [s.input, s.voice, s.model, s.responseFormat])).toEqual([
      ['Hi.', 'nova', 'tts-1', 'pcm'],
      ['Hello there, it is very nice to meet you today.', 'nova', 'tts-1', 'pcm'],
    ]);
    // The plugin drops a last partial 100 ms frame.
    expect(fake.speeches.at(-1)!.audioSeconds - long).toBeLessThan(0.1);
    expect(fake.speeches.at(-1)!.audioSeconds - long).toBeGreaterThanOrEqual(0);
  });
});

async function collectText(stream: AsyncIterable<llm.ChatChunk>): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += chunk.delta?.content ?? '';
  return text;
}
