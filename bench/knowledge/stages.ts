// Where a document turn's time goes in the offline reply model (issue 45 point 3), the model
// alone: the visitor's question with its passage (agent/conversation/knowledge.ts addPassages,
// as the job adds it) → the reply's first piece, and how many prompt tokens that evaluated after
// what the job read ahead once the greeting was spoken; a plain question beside it. Each sample
// starts from a sequence that holds another conversation (a fresh job's).
//   npm run bench -- bench/knowledge/stages.ts [--samples 5] [--threads 2]
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { initializeLogger, llm } from '@livekit/agents';
import { agentInstructions } from '../../agent/conversation/instructions.ts';
import { addPassages } from '../../agent/conversation/knowledge.ts';
import { loadOfflineLanguageModel } from '../../agent/providers/offline/index.ts';
import { loadProviders } from '../../src/config.ts';
import { report } from '../support/index.ts';

const { values } = parseArgs({
  options: { samples: { type: 'string', default: '5' }, threads: { type: 'string', default: '2' } },
});
initializeLogger({ pretty: false, level: 'error' });

const PROMPT = 'You are Ada, who answers for a small bakery. Answer in one short sentence.';
const GREETING = "Hi, I'm Ada. How can I help you today?";
/** Questions and the passage that answers them (bench/conversation's bakery document), with the words a right answer has. */
const PASSAGE =
  'Opening hours The bakery opens at seven in the morning from Monday to Saturday, and at nine on Sundays. It closes at six in the evening every day.';
const QUESTIONS: [question: string, right: RegExp][] = [
  ['What time do you open on Sundays?', /\bnine\b|\b9\b/i],
  ['When do you close in the evening?', /\bsix\b|\b6\b/i],
  ['What time do you open on Mondays?', /\bseven\b|\b7\b/i],
];
const PLAIN = 'How are you today?';
const instructions = agentInstructions({ prompt: PROMPT, language: 'en', visualAwareness: false, quotedData: true });

const { llm: model, close } = await loadOfflineLanguageModel(loadProviders(process.env).modelsDir, {
  threads: Number(values.threads),
});

function conversation(question: string, passage: boolean): llm.ChatContext {
  const chatCtx = new llm.ChatContext();
  chatCtx.addMessage({ role: 'system', content: instructions });
  chatCtx.addMessage({ role: 'assistant', content: GREETING });
  const message = chatCtx.addMessage({ role: 'user', content: question });
  if (passage)
    addPassages(
      chatCtx,
      message,
      [{ document_id: 'doc_1', document_name: 'hours.md', text: PASSAGE, score: 0.8 }],
      'en',
    );
  return chatCtx;
}

/** One reply through chat(): when its first piece came, its end, its text, the prompt tokens evaluated. */
async function timed(chatCtx: llm.ChatContext) {
  const started = performance.now();
  let first: number | undefined;
  let text = '';
  for await (const chunk of model.chat({ chatCtx })) {
    if (chunk.delta?.content && first === undefined) first = performance.now() - started;
    text += chunk.delta?.content ?? '';
  }
  return {
    firstMs: first ?? Number.NaN,
    totalMs: performance.now() - started,
    text,
    evaluated: model.lastEvaluatedTokens,
  };
}

const documentFirst: number[] = [];
const plainFirst: number[] = [];
let right = 0;
for (let sample = 0; sample < Number(values.samples); sample++) {
  for (const [question, expected] of QUESTIONS) {
    // Another conversation in the sequence, as a job's process holds before its session.
    const other = new llm.ChatContext();
    other.addMessage({ role: 'system', content: `You are a weather bot number ${sample}.` });
    other.addMessage({ role: 'user', content: 'Will it rain?' });
    for await (const _ of model.chat({ chatCtx: other })) {
    }
    // The job reads ahead once the greeting is spoken (agent/conversation/index.ts).
    await model.prime(instructions, GREETING);
    const turn = await timed(conversation(question, true));
    documentFirst.push(turn.firstMs);
    if (expected.test(turn.text)) right++;
    console.log(
      `${question} → ${JSON.stringify(turn.text.trim())} (first piece ${Math.round(turn.firstMs)} ms, prompt tokens evaluated ${turn.evaluated})`,
    );
  }
  await model.prime(instructions, GREETING);
  const plain = await timed(conversation(PLAIN, false));
  plainFirst.push(plain.firstMs);
  console.log(`${PLAIN} → ${JSON.stringify(plain.text.trim())} (prompt tokens evaluated ${plain.evaluated})`);
}
await close();

console.log(`\nmachine: ${cpus().length} CPUs, ${cpus()[0]?.model}; ${new Date().toISOString()}; model ${model.model}`);
const show = (label: string, samples: number[]) => report(label, samples, { width: 44, digits: 0 });
show('question with its passage → first piece', documentFirst);
show('plain question → first piece', plainFirst);
console.log(`answers with the passage's words: ${right} of ${documentFirst.length}`);
