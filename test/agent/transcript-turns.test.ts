// AGENT_TURN_DETECTION=transcript: which transcripts read as a finished turn, per language.
// The detector in a real session is tested in test/conversation/cloud-providers.test.ts.
import { describe, expect, test } from 'bun:test';
import { llm } from '@livekit/agents';
import {
  readingWithin,
  type SentenceReader,
  soundsFinished,
  transcriptTurnDetector,
  turnIsOver,
} from '../../agent/conversation/transcript-turns.ts';

describe('soundsFinished', () => {
  test('finished questions and statements, as Whisper and Deepgram punctuate them', () => {
    for (const text of [
      'What is the capital of France?',
      'How are you?',
      'Thanks.',
      'yes',
      'Hello there',
      'I like that.',
      '',
    ]) {
      expect(soundsFinished(text, 'en')).toBe(true);
    }
    expect(soundsFinished('¿Cuál es la capital de Francia?', 'es')).toBe(true);
    expect(soundsFinished('Jaka jest stolica Polski?', 'pl')).toBe(true);
    expect(soundsFinished('Яка столиця України?', 'uk')).toBe(true);
  });

  test('a phrase broken off mid-sentence', () => {
    // As Whisper wrote the first halves of hesitant questions (bench/conversation/eval --hesitant):
    // a full stop or a question mark after a word finished turns rarely end on.
    // "which river flows through." was heard in a try with a question of my own.
    for (const text of [
      'What is the capital of?',
      'How many days are in.',
      'which river flows through.',
      'What is the largest ocean on?',
      'Tell me about the',
      'Paris and',
      'Um.',
      'I think my',
    ]) {
      expect(soundsFinished(text, 'en')).toBe(false);
    }
    // The price: a question that does end on one is held too.
    expect(soundsFinished('Where are you from?', 'en')).toBe(false);
    // Trailing off: an ellipsis, a comma.
    expect(soundsFinished('So the capital is...', 'en')).toBe(false);
    expect(soundsFinished('Well,', 'en')).toBe(false);
    expect(soundsFinished('¿Cuál es la capital de', 'es')).toBe(false);
    expect(soundsFinished('Jaka jest stolica i', 'pl')).toBe(false);
    expect(soundsFinished('Яка столиця і', 'uk')).toBe(false);
  });

  test('each language has its own words: "de" ends no Spanish sentence, an English one may end on it', () => {
    expect(soundsFinished('La capital de', 'es')).toBe(false);
    expect(soundsFinished('I heard of De', 'en')).toBe(true);
  });
});

describe('transcriptTurnDetector', () => {
  const context = (...turns: [role: 'user' | 'assistant', text: string][]) => {
    const chat = new llm.ChatContext();
    for (const [role, content] of turns) chat.addMessage({ role, content });
    return chat;
  };

  test('judges the last user turn, in the language the session speaks now', async () => {
    let language: 'en' | 'es' = 'en';
    const detector = transcriptTurnDetector(() => language);
    const threshold = (await detector.unlikelyThreshold('en'))!;
    expect(await detector.supportsLanguage('pl')).toBe(true);
    expect(await detector.predictEndOfTurn(context(['user', 'What is the capital of']))).toBeLessThan(threshold);
    // The assistant's reply after it does not count: the user's last words do.
    expect(
      await detector.predictEndOfTurn(
        context(['user', 'What is the capital of'], ['assistant', 'Go on.'], ['user', 'France?']),
      ),
    ).toBeGreaterThan(threshold);
    expect(await detector.predictEndOfTurn(context(['user', 'La capital de']))).toBeGreaterThan(threshold);
    language = 'es';
    expect(await detector.predictEndOfTurn(context(['user', 'La capital de']))).toBeLessThan(threshold);
  });
});

describe('turnIsOver with a sentence reader', () => {
  /** A reader that answers what it is told and notes what it was asked. */
  const reader = (probability: number | Error) => {
    const asked: string[] = [];
    const read: SentenceReader & { asked: string[] } = {
      asked,
      probability: async (text) => {
        asked.push(text);
        if (probability instanceof Error) throw probability;
        return probability;
      },
    };
    return read;
  };

  test('a clear verdict overrules the word list both ways', async () => {
    expect(await turnIsOver('Which continent is Brazil in?', 'en')).toBe(false);
    expect(await turnIsOver('Which continent is Brazil in?', 'en', reader(0.56))).toBe(true);
    expect(await turnIsOver('Which country has', 'en')).toBe(true);
    expect(await turnIsOver('Which country has', 'en', reader(0.0001))).toBe(false);
  });

  test('an unclear verdict leaves it to the word list', async () => {
    expect(await turnIsOver('How are you?', 'en', reader(0.003))).toBe(true);
    expect(await turnIsOver('What is the capital of', 'en', reader(0.003))).toBe(false);
  });

  test('trailing off holds the turn without asking; other languages are not asked', async () => {
    const asked = reader(0.9);
    expect(await turnIsOver('So, the capital of France…', 'en', asked)).toBe(false);
    expect(await turnIsOver('¿Cuál es la capital de', 'es', asked)).toBe(false);
    expect(await turnIsOver('Jaka jest stolica Polski?', 'pl', asked)).toBe(true);
    expect(asked.asked).toEqual([]);
  });

  test('a reader that fails leaves the turn to the word list', async () => {
    expect(await turnIsOver('Which country has', 'en', reader(new Error('model gone')))).toBe(true);
    expect(await turnIsOver('What is the capital of', 'en', reader(new Error('model gone')))).toBe(false);
  });

  test('a reader that never answers (a request lost in the inference process) is given up after its deadline: the word list decides', async () => {
    const silent: SentenceReader = { probability: () => new Promise<number>(() => {}) };
    const started = performance.now();
    expect(await turnIsOver('Which continent is Brazil in?', 'en', readingWithin(silent, 200))).toBe(false);
    expect(await turnIsOver('Which continent is Brazil', 'en', readingWithin(silent, 200))).toBe(true);
    expect(performance.now() - started).toBeLessThan(2_000);
    // One that answers in time is heard.
    expect(await turnIsOver('Which continent is Brazil in?', 'en', readingWithin(reader(0.56), 200))).toBe(true);
  });

  test("the detector passes the user's last words to its reader", async () => {
    const asked = reader(0.0001);
    const detector = transcriptTurnDetector(() => 'en', asked);
    const chat = new llm.ChatContext();
    chat.addMessage({ role: 'user', content: 'Which country has' });
    expect(await detector.predictEndOfTurn(chat)).toBeLessThan((await detector.unlikelyThreshold('en'))!);
    expect(asked.asked).toEqual(['Which country has']);
  });
});
