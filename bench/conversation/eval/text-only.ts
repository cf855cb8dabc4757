// bench/conversation/eval/text-only: the evaluation's questions typed, not spoken, to the
// offline language model through the agent's own OfflineLLM (its prompt, its sentence cut):
// answer accuracy, replies in the wrong language, the first token and the first clause (what the
// offline voice can start speaking, reply-chunks.ts), per language, in
// seconds instead of the spoken run's minutes. For comparing candidate models (issue 14,
// point 3); the spoken run (index.ts) is the one that counts.
//   bun bench/conversation/eval/text-only.ts [--model path/to/model.gguf] [--languages en,es] [--threads 1]
// Without --model: the bootstrap's model (the manifest's).
import { parseArgs } from 'node:util';
import { initializeLogger, llm } from '@livekit/agents';
import { greetingText } from '../../../agent/conversation/greeting.ts';
import { agentInstructions } from '../../../agent/conversation/instructions.ts';
import { loadOfflineLanguageModel } from '../../../agent/providers/offline/index.ts';
import { splitClauses } from '../../../agent/providers/offline/reply-chunks.ts';
import { loadProviders } from '../../../src/config.ts';
import type { SpokenLanguage } from '../../../src/contract/index.ts';
import { report } from '../../support/index.ts';
import { PERSONA, QUESTIONS } from './questions.ts';
import { isRightAnswer, replyLanguage } from './scoring.ts';

const { values } = parseArgs({
  options: {
    model: { type: 'string' },
    languages: { type: 'string', default: 'en,es,pl,uk' },
    threads: { type: 'string', default: '1' },
  },
});
// agents' LLM streams log through its logger, which a job process sets up and this script must.
initializeLogger({ pretty: false, level: 'warn' });
const { llm: model, close } = await loadOfflineLanguageModel(loadProviders(process.env).modelsDir, {
  modelPath: values.model,
  threads: Number(values.threads),
});
console.log(
  `model=${values.model ?? '(manifest)'} threads=${values.threads} cpus=${navigator.hardwareConcurrency} bun=${Bun.version}`,
);

const rows: string[] = [];
for (const language of values.languages.split(',') as SpokenLanguage[]) {
  const questions = QUESTIONS.filter((question) => question.language === language);
  model.answerIn(language);
  // The session as the agent builds it: instructions, the greeting, then each exchange.
  const chatCtx = new llm.ChatContext();
  chatCtx.addMessage({
    role: 'system',
    content: agentInstructions({ prompt: PERSONA.prompt, language, visualAwareness: false }),
  });
  chatCtx.addMessage({
    role: 'assistant',
    content: greetingText({ name: PERSONA.name, prompt: PERSONA.prompt, language }),
  });
  let right = 0;
  let wrongLanguage = 0;
  const firstTokens: number[] = [];
  const firstClauses: number[] = [];
  for (const question of questions) {
    chatCtx.addMessage({ role: 'user', content: question.text });
    const startedAt = performance.now();
    let firstToken: number | undefined;
    let firstClause: number | undefined;
    let reply = '';
    for await (const chunk of model.chat({ chatCtx })) {
      firstToken ??= performance.now() - startedAt;
      reply += chunk.delta?.content ?? '';
      // The first clause is whole once a second one begins (the voice's chunker sees the same).
      if (firstClause === undefined && splitClauses(reply).length > 1) firstClause = performance.now() - startedAt;
    }
    firstClause ??= performance.now() - startedAt;
    reply = reply.trim();
    chatCtx.addMessage({ role: 'assistant', content: reply });
    if (firstToken !== undefined) firstTokens.push(firstToken);
    firstClauses.push(firstClause);
    const ok = isRightAnswer(reply, question.expect);
    const detected = replyLanguage(reply);
    if (ok) right++;
    if (detected !== null && detected !== language) wrongLanguage++;
    console.log(
      `${ok ? 'right' : 'wrong'} ${detected ?? '?'} ${Math.round(firstToken ?? 0)} / ${Math.round(firstClause)} ms | ${question.text} | ${reply}`,
    );
  }
  report(`first token ${language}`, firstTokens, { width: 24, digits: 0 });
  report(`first clause ${language}`, firstClauses, { width: 24, digits: 0 });
  rows.push(
    `| ${language} | ${questions.length} | ${right}/${questions.length} (${Math.round((right / questions.length) * 100)} %) | ${wrongLanguage} |`,
  );
}
console.log('\n| language | n | right answers | wrong language |\n|---|---|---|---|');
for (const row of rows) console.log(row);
await close();
process.exit(0);
