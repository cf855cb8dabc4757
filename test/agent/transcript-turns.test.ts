// AGENT_TURN_DETECTION=transcript: which transcripts read as a finished turn, per language.
// The detector in a real session is tested in test/conversation/cloud-providers.test.ts.
import { describe, expect, test } from 'bun:test';
import { llm } from '@livekit/agents';
import { soundsFinished, transcriptTurnDetector } from '../../agent/conversation/transcript-turns.ts';

describe('soundsFinished', () => {
  test('finished questions and statements, as Whisper and Deepgram punctuate them', () => {
    for (const text of ['What is the capital of France?', 'How are you?', 'Thanks.', 'yes', 'Hello there', 'I like that.', '']) {
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
    for (const text of ['What is the capital of?', 'How many days are in.', 'which river flows through.', 'What is the largest ocean on?', 'Tell me about the', 'Paris and', 'Um.', 'I think my']) {
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
    expect(await detector.predictEndOfTurn(context(['user', 'What is the capital of'], ['assistant', 'Go on.'], ['user', 'France?']))).toBeGreaterThan(threshold);
    expect(await detector.predictEndOfTurn(context(['user', 'La capital de']))).toBeGreaterThan(threshold);
    language = 'es';
    expect(await detector.predictEndOfTurn(context(['user', 'La capital de']))).toBeLessThan(threshold);
  });
});
