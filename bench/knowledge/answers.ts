// bench/knowledge/answers: are the questions answered right once their passages are in the turn?
// Each question is retrieved for as recall.ts does (the real upload, chunking, embeddings and
// search), its passages put in the turn's context with the agent's own instruction
// (agent/conversation/knowledge.ts addPassages: quoted as data before the visitor's message, the
// rule after it, as KnowledgeTurns adds them), and answered by
//   offline  the offline model through the agent's OfflineLLM (its prompt), as
//            bench/conversation/eval/text-only.ts does;
//   fake     the agents OpenAI plugin against the OpenAI wire fake (test/support/fakes/openai.ts),
//            whose responder answers with the request's sentence (instructions or quoted data)
//            sharing most words with the question (passage-responder.ts): it shows the passage
//            reached the request.
// "Right": every expected keyword in the reply; for a question no document answers, a reply
// saying it does not know. The same without retrieval is the baseline. One fresh context per
// question (the instructions, the greeting, the question).
//   bun bench/knowledge/answers.ts [--providers offline,fake] [--languages en,es] [--limit N] [--threads 1]
import { parseArgs } from 'node:util';
import { initializeLogger, llm } from '@livekit/agents';
import * as openai from '@livekit/agents-plugin-openai';
import { greetingText } from '../../agent/conversation/greeting.ts';
import { agentInstructions } from '../../agent/conversation/instructions.ts';
import { addPassages } from '../../agent/conversation/knowledge.ts';
import { loadOfflineLanguageModel } from '../../agent/providers/offline/index.ts';
import { loadProviders } from '../../src/config.ts';
import type { KnowledgePassage } from '../../src/contract/index.ts';
import { startFakeOpenAI } from '../../test/support/fakes/openai.ts';
import { report } from '../support/index.ts';
import { answerFromPassages } from './passage-responder.ts';
import { hasAllKeywords, type KnowledgeQuestion, loadQuestions, saysItDoesNotKnow, share } from './question-set.ts';
import { openKnowledgeBench } from './retrieval.ts';

const { values } = parseArgs({
  options: {
    providers: { type: 'string', default: 'offline,fake' },
    languages: { type: 'string', default: 'en,es' },
    limit: { type: 'string' },
    threads: { type: 'string', default: '1' },
    // --no-standing-rule: the rule in each turn, as before 12-04 (the fake always gets it so).
    'standing-rule': { type: 'boolean', default: true },
  },
  allowNegative: true,
});
initializeLogger({ pretty: false, level: 'warn' });

/** The agent's identity in this bench: no knowledge of its own about any of the documents. */
const PERSONA = {
  name: 'Sam',
  prompt:
    'You are Sam, a friendly assistant who answers visitors\u2019 questions. Answer in one or two short sentences.',
};

const languages = values.languages.split(',');
const questions = (await loadQuestions())
  .filter((q) => languages.includes(q.language))
  .slice(0, values.limit ? Number(values.limit) : undefined);

const knowledge = await openKnowledgeBench();
console.log(
  `${knowledge.describe()} standing_rule=${values['standing-rule']} cpus=${navigator.hardwareConcurrency} bun=${Bun.version}`,
);
const retrieved = new Map<string, KnowledgePassage[]>();
for (const question of questions) retrieved.set(question.id, (await knowledge.search(question.text)).passages);
await knowledge.stop();

interface Answerer {
  name: string;
  answer(question: KnowledgeQuestion, chatCtx: llm.ChatContext): Promise<string>;
  /** The last request's text as the model received it (the fake's record), when known. */
  lastRequestSystem?(): string;
  close(): Promise<void>;
}

const answerers: Answerer[] = [];
for (const provider of values.providers.split(',')) {
  if (provider === 'offline') {
    const { llm: model, close } = await loadOfflineLanguageModel(loadProviders(process.env).modelsDir, {
      threads: Number(values.threads),
    });
    answerers.push({
      name: 'offline model',
      async answer(question, chatCtx) {
        model.answerIn(question.language);
        return read(model.chat({ chatCtx }));
      },
      close,
    });
  } else if (provider === 'fake') {
    const fake = startFakeOpenAI();
    fake.firstTokenDelayMs = 0;
    fake.tokenIntervalMs = 0;
    let current: KnowledgeQuestion | undefined;
    fake.respond((chat) => answerFromPassages(chat, current!.language === 'es' ? 'es' : 'en'));
    const model = new openai.LLM({ apiKey: 'fake', baseURL: fake.url, model: 'gpt-4.1-mini' });
    answerers.push({
      name: 'OpenAI wire fake',
      async answer(question, chatCtx) {
        current = question;
        return read(model.chat({ chatCtx }));
      },
      lastRequestSystem: () => {
        const chat = fake.chats.at(-1);
        return chat ? [chat.system, ...chat.userTexts].join('\n') : '';
      },
      close: () => fake.stop(),
    });
  } else throw new Error(`--providers: offline or fake, not ${provider}`);
}

/** The first token's time of each reply read, per context (with retrieval, the prompt is longer). */
let firstTokenMs: number | undefined;
async function read(stream: AsyncIterable<llm.ChatChunk>): Promise<string> {
  const started = performance.now();
  firstTokenMs = undefined;
  let reply = '';
  for await (const chunk of stream) {
    if (chunk.delta?.content) firstTokenMs ??= performance.now() - started;
    reply += chunk.delta?.content ?? '';
  }
  return reply.trim();
}

/** The turn's context as the agent builds it: instructions, greeting, its passages quoted, the question, the rule. */
function turnContext(
  question: KnowledgeQuestion,
  passages: KnowledgePassage[],
  { standingRule = false } = {},
): llm.ChatContext {
  const chatCtx = new llm.ChatContext();
  chatCtx.addMessage({
    role: 'system',
    content: agentInstructions({
      prompt: PERSONA.prompt,
      language: question.language,
      visualAwareness: false,
      quotedData: passages.length > 0 || standingRule,
      standingKnowledgeRule: standingRule,
    }),
  });
  chatCtx.addMessage({
    role: 'assistant',
    content: greetingText({ name: PERSONA.name, prompt: PERSONA.prompt, language: question.language }),
  });
  const asked = chatCtx.addMessage({ role: 'user', content: question.text });
  // KnowledgeTurns adds nothing when no passage came back.
  if (passages.length > 0) addPassages(chatCtx, asked, passages, question.language, { standingRule });
  return chatCtx;
}

const isRight = (question: KnowledgeQuestion, reply: string) =>
  question.expect_document === null ? saysItDoesNotKnow(reply) : hasAllKeywords(reply, question.expect_keywords);

const rows: string[] = [];
try {
  for (const answerer of answerers) {
    for (const mode of ['with retrieval', 'without (baseline)'] as const) {
      const outcomes: { question: KnowledgeQuestion; right: boolean; inRequest?: boolean }[] = [];
      const firstTokens: number[] = [];
      for (const question of questions) {
        const passages = mode === 'with retrieval' ? retrieved.get(question.id)! : [];
        // The offline model's session with documents has their rule in its instructions, as the job gives it.
        const standingRule = answerer.name === 'offline model' && mode === 'with retrieval' && values['standing-rule'];
        const reply = await answerer.answer(question, turnContext(question, passages, { standingRule }));
        const right = isRight(question, reply);
        const system = answerer.lastRequestSystem?.();
        const inRequest = system === undefined ? undefined : hasAllKeywords(system, question.expect_keywords);
        outcomes.push({ question, right, inRequest });
        if (firstTokenMs !== undefined) firstTokens.push(firstTokenMs);
        console.log(
          `${answerer.name} | ${mode} | ${right ? 'right' : 'wrong'} | ${question.id} | ${question.text} | ${reply.replace(/\s+/g, ' ')}`,
        );
      }
      report(`first token, ${answerer.name}, ${mode}`, firstTokens, { width: 52, digits: 0 });
      for (const language of languages) {
        const ofLanguage = outcomes.filter((o) => o.question.language === language);
        const answerable = ofLanguage.filter((o) => o.question.expect_document !== null);
        const unanswerable = ofLanguage.filter((o) => o.question.expect_document === null);
        const count = (list: typeof outcomes) => share(list.filter((o) => o.right).length, list.length);
        const inRequest = answerer.lastRequestSystem
          ? share(answerable.filter((o) => o.inRequest).length, answerable.length)
          : '–';
        rows.push(
          `| ${answerer.name} | ${mode} | ${language} | ${count(answerable)} | ${inRequest} | ${count(unanswerable)} |`,
        );
      }
    }
  }
} finally {
  for (const answerer of answerers) await answerer.close();
}
console.log(
  '\n| model | context | language | right answers (keywords in the reply) | keywords in the model\'s request | "I do not know" to unanswerable questions |',
);
console.log('|---|---|---|---|---|---|');
for (const row of rows) console.log(row);
process.exit(0);
