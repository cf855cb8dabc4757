// What Whisper is given (speech_server.py). Its window: the speech and a few seconds of silence
// after it, not always 30 s (window_frames), ~2.5x faster for a short question; short questions
// must be heard as before, and speech that fills the short window neither cut nor repeated.
// Its input: a fragment of the previous turn left in the VAD's prefix (drop_stale_lead) is not
// heard. Needs the models the bootstrap installs.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { loadOfflineSpeech } from '../../../agent/providers/offline/index.ts';
import type { SpeechServer } from '../../../agent/providers/offline/speech-server.ts';
import { loadProviders } from '../../../src/config.ts';
import { espeak } from '../../support/fakes/speech.ts';
import { words } from './words.ts';

const RATE = 16_000;
let speech: SpeechServer;

beforeAll(async () => {
  speech = await loadOfflineSpeech(loadProviders(process.env).modelsDir);
}, 120_000);

afterAll(async () => {
  await speech?.close();
});

async function hear(text: string, voice: string, model: 'en' | 'multilingual', language: string) {
  const { samples } = await espeak(text, { voice, wordsPerMinute: 150, sampleRate: RATE });
  return transcribe(samples, model, language);
}

async function transcribe(samples: Int16Array, model: 'en' | 'multilingual' = 'en', language = 'en') {
  const heard = await speech.transcribe(samples, RATE, { model, language, allowed: [] });
  return { ...heard, spokenSeconds: samples.length / RATE, words: words(heard.text) };
}

/** espeak-ng's voice without the silence it starts and ends with. */
async function voiceOnly(text: string, wordsPerMinute: number): Promise<Int16Array> {
  const { samples } = await espeak(text, { voice: 'en-us', wordsPerMinute, sampleRate: RATE });
  const loud = (i: number) => Math.abs(samples[i]!) > 300;
  let start = 0;
  let end = samples.length;
  while (start < end && !loud(start)) start++;
  while (end > start && !loud(end - 1)) end--;
  return samples.subarray(start, end);
}

function join(...parts: (Int16Array | number)[]): Int16Array {
  const pieces = parts.map((part) => (typeof part === 'number' ? new Int16Array(Math.round(part * RATE)) : part));
  const joined = new Int16Array(pieces.reduce((n, piece) => n + piece.length, 0));
  let offset = 0;
  for (const piece of pieces) {
    joined.set(piece, offset);
    offset += piece.length;
  }
  return joined;
}

describe("Whisper's window", () => {
  test('a short English question is encoded in a 15 s window and heard right', async () => {
    const heard = await hear('What is the weather like in Paris today?', 'en-us', 'en', 'en');
    expect(heard.spokenSeconds).toBeLessThan(4);
    expect(heard.windowSeconds).toBe(15);
    expect(heard.words).toEqual(expect.arrayContaining(['weather', 'paris']));
  });

  test('Whisper base (other languages) uses the short window too', async () => {
    const heard = await hear(
      'Buenos días. Me gustaría saber qué tiempo hará mañana en Madrid.',
      'es',
      'multilingual',
      'es',
    );
    expect(heard.windowSeconds).toBe(15);
    expect(heard.words).toContain('madrid');
  });

  test('a long turn gets a window that holds all of it and five seconds more, heard once to its end', async () => {
    const text =
      'I am planning a long journey next summer. First I want to visit the mountains in the north, ' +
      'then I would like to travel along the coast, and at the very end I hope to see the old harbour of Lisbon.';
    const heard = await hear(text, 'en-us', 'en', 'en');
    expect(heard.spokenSeconds).toBeGreaterThan(8);
    expect(heard.windowSeconds).toBeGreaterThanOrEqual(heard.spokenSeconds + 5 - 0.05);
    expect(heard.windowSeconds).toBeLessThanOrEqual(30);
    expect(heard.words).toEqual(expect.arrayContaining(['journey', 'mountains', 'coast']));
    // Filling a window too short for it, Whisper says the sentence again.
    expect(heard.words.filter((word) => word === 'journey')).toHaveLength(1);
    expect(heard.words.slice(-3).join(' ')).toMatch(/harbou?r|lisbon/);
  });

  test('a turn longer than 30 s is read in 30 s windows, beginning and end', async () => {
    const sentences = [
      'My grandmother grew up in a small village near the river.',
      'Every morning she walked to the market with a basket of apples.',
      'In the afternoon she taught the children of the village to read.',
      'On Sundays the whole family gathered for a long lunch in the garden.',
      'Years later she moved to the city and opened a bakery.',
      'Her bread was famous in the whole neighbourhood.',
      'She always said that a good loaf needs time, patience and a warm kitchen.',
      'Now I would like to know more about the history of that village, especially its old church.',
    ];
    const heard = await hear(sentences.join(' '), 'en-us', 'en', 'en');
    expect(heard.spokenSeconds).toBeGreaterThan(30);
    expect(heard.windowSeconds).toBe(Math.ceil(heard.spokenSeconds / 30) * 30);
    // The first sentence and the last one (its "history"; tiny.en heard its closing words,
    // espeak-ng's "especially its old church", as "this ashley is all in charge" in one run).
    expect(heard.words).toEqual(expect.arrayContaining(['grandmother', 'history']));
  });
});

describe("the VAD's prefix", () => {
  const question = 'What is the weather like in Paris today?';

  // What the VAD buffered when the visitor's client went quiet (DTX): the last 0.25 s of the
  // previous turn, its 0.25 s of silence, and then the new turn.
  test.each(['Hi.', 'Okay.', 'Yes.'])(
    'the end of the previous turn ("%s") before the silence is not heard',
    async (previous) => {
      const tail = (await voiceOnly(previous, 250)).slice(-0.25 * RATE);
      const stale = await transcribe(join(tail, 0.25, await voiceOnly(question, 150)));
      expect(stale.words.slice(0, 2)).toEqual(['what', 'is']);
      expect(stale.words).toEqual(expect.arrayContaining(['weather', 'paris']));
    },
  );

  test('a word the visitor says after the padding, then a pause, is kept', async () => {
    const heard = await transcribe(join(0.5, await voiceOnly('So,', 150), 0.3, await voiceOnly(question, 150)));
    expect(heard.words[0]).toBe('so');
    expect(heard.words).toEqual(expect.arrayContaining(['weather', 'paris']));
  });

  test('a soft start joined to the voice is kept', async () => {
    const heard = await transcribe(join(0.3, await voiceOnly('Hello, what is the weather like in Paris today?', 150)));
    expect(heard.words[0]).toBe('hello');
  });
});
