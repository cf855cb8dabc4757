// SmolLM2 reads whether the visitor's words end a sentence (agent/providers/offline/sentence-end.ts),
// and the `transcript` end-of-turn detector takes its clear verdicts (turnIsOver). Whole questions
// of the evaluation set must end the turn, the halves a visitor pauses after must not: these
// are the cut-offs and the 3 s waits bench/conversation/eval counted. Needs the installed models.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { turnIsOver } from '../../../agent/conversation/transcript-turns.ts';
import { loadOfflineSentenceEnd, type SentenceEnd } from '../../../agent/providers/offline/index.ts';
import { HESITANT_QUESTIONS, QUESTIONS } from '../../../bench/conversation/eval/questions.ts';
import { loadProviders } from '../../../src/config.ts';

let reader: SentenceEnd;

beforeAll(async () => {
  reader = await loadOfflineSentenceEnd(loadProviders(process.env).modelsDir);
}, 60_000);

afterAll(async () => {
  await reader?.close();
});

const english = <T extends { language: string }>(questions: T[]) =>
  questions.filter((question) => question.language === 'en');

describe('SmolLM2 reads the end of a sentence', () => {
  test('a whole question reads far likelier to end than the half a visitor paused after', async () => {
    for (const { first, text } of english(HESITANT_QUESTIONS)) {
      const whole = await reader.probability(text);
      const half = await reader.probability(first);
      expect({ text, whole: whole > 0.05 }).toEqual({ text, whole: true });
      expect({ first, half: half < 0.03 }).toEqual({ first, half: true });
    }
  }, 60_000);

  test('the halves hold the turn: the reader overrules the word list where it missed them', async () => {
    const cutOff: string[] = [];
    for (const { first } of english(HESITANT_QUESTIONS)) if (await turnIsOver(first, 'en', reader)) cutOff.push(first);
    // A whole question in its own right, as the reader says (0.025, between its verdicts).
    expect(cutOff).toEqual(['What is the longest river']);
    // The word list alone also let this one through: a verb is no unfinished ending.
    expect(await turnIsOver('Which country has', 'en')).toBe(true);
    expect(await turnIsOver('Which country has', 'en', reader)).toBe(false);
  }, 60_000);

  test('every English question of the evaluation ends the turn, however Whisper punctuates and capitalises it', async () => {
    const held: string[] = [];
    for (const { text } of english(QUESTIONS)) {
      const lowerCase = text.charAt(0).toLowerCase() + text.slice(1);
      for (const written of [
        text,
        text.replace(/[?.!]$/, '.'),
        text.replace(/[?.!]$/, ''),
        lowerCase.replace(/[?.!]$/, '.'),
      ]) {
        if (!(await turnIsOver(written, 'en', reader))) held.push(written);
      }
    }
    expect(held).toEqual([]);
    // The word list alone held the three that end on a preposition for the maximum delay.
    expect(await turnIsOver('Which continent is Brazil in?', 'en')).toBe(false);
  }, 120_000);

  test('readings queue on the one sequence and each gets its own answer', async () => {
    const [whole, half] = await Promise.all([
      reader.probability('What is the capital of France?'),
      reader.probability('What is the capital of'),
    ]);
    expect(whole).toBeGreaterThan(0.5);
    expect(half).toBeLessThan(0.001);
  });
});
