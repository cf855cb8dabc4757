// The offline reply model (Qwen2.5-Coder-0.5B) keeps to the letters of the language it
// answers in (agent/providers/offline/alphabets.ts). Without the grammar SmolLM2-135M, the
// reply model before it, answered 5 of the evaluation's 6 Ukrainian questions in Russian or
// with Latin words ("Яа Ada, её. Обязательно."). Needs the installed models.
import { describe, expect, test } from 'bun:test';
import { llm } from '@livekit/agents';
import { greetingText } from '../../../agent/conversation/greeting.ts';
import { agentInstructions } from '../../../agent/conversation/instructions.ts';
import { withinAlphabet } from '../../../agent/providers/offline/alphabets.ts';
import type { OfflineLLM } from '../../../agent/providers/offline/index.ts';
import { PERSONA, QUESTIONS } from '../../../bench/conversation/eval/questions.ts';
import { replyLanguage } from '../../../bench/conversation/eval/scoring.ts';
import { SPOKEN_LANGUAGES, type SpokenLanguage } from '../../../src/contract/index.ts';
import { withOfflineLanguageModel } from './language-model.ts';

let model: OfflineLLM;
withOfflineLanguageModel(
  {},
  (loaded) => {
    model = loaded;
  },
  60_000,
);

/** The session as the agent builds it, then each question of `language` in turn: the replies. */
async function replies(language: SpokenLanguage, questions: string[]): Promise<string[]> {
  model.answerIn(language);
  const chatCtx = new llm.ChatContext();
  chatCtx.addMessage({
    role: 'system',
    content: agentInstructions({ prompt: PERSONA.prompt, language, visualAwareness: false }),
  });
  chatCtx.addMessage({
    role: 'assistant',
    content: greetingText({ name: PERSONA.name, prompt: PERSONA.prompt, language }),
  });
  const out: string[] = [];
  for (const question of questions) {
    chatCtx.addMessage({ role: 'user', content: question });
    let reply = '';
    for await (const chunk of model.chat({ chatCtx })) reply += chunk.delta?.content ?? '';
    chatCtx.addMessage({ role: 'assistant', content: reply });
    out.push(reply.trim());
  }
  return out;
}

const questionsIn = (language: SpokenLanguage) =>
  QUESTIONS.filter((question) => question.language === language).map((question) => question.text);

describe("the offline reply model keeps to the session language's alphabet", () => {
  test('Ukrainian questions get Ukrainian letters only: no Latin words, no Russian ы э ё ъ', async () => {
    const answers = await replies('uk', questionsIn('uk'));
    expect(answers.filter((answer) => !withinAlphabet(answer, 'uk'))).toEqual([]);
    expect(answers.filter((answer) => /[a-zA-Zыэёъ]/.test(answer))).toEqual([]);
    // Nothing the language detector takes for another language (Russian, before).
    expect(answers.filter((answer) => ![null, 'uk'].includes(replyLanguage(answer)))).toEqual([]);
  }, 60_000);

  test('every language, switched on the one loaded model as auto mode does', async () => {
    for (const language of SPOKEN_LANGUAGES) {
      const answers = await replies(language, questionsIn(language).slice(0, 3));
      expect({ language, outside: answers.filter((answer) => !withinAlphabet(answer, language)) }).toEqual({
        language,
        outside: [],
      });
      expect(answers.every((answer) => answer.length > 0)).toBe(true);
    }
    // Back to English after Ukrainian: the grammar follows the language, Latin letters again.
    expect((await replies('en', ['What is the capital of France?']))[0]).toContain('Paris');
  }, 60_000);
});
