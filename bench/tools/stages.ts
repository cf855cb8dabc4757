// Where a tool turn's time goes in the offline reply model (issue 45 point 2), the model alone:
// the call's generation (the visitor's question → the call) and the answer's (the result →
// its first words and its end), each after what the job has read ahead by then, through
// OfflineLLM as the agent runs it. Each sample starts from a sequence that holds another
// conversation (a fresh job's), then reads ahead as the job does once the greeting is spoken.
//   npm run bench -- bench/tools/stages.ts [--samples 5] [--threads 2]
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { initializeLogger, llm } from '@livekit/agents';
import { agentInstructions } from '../../agent/conversation/instructions.ts';
import { loadOfflineLanguageModel } from '../../agent/providers/offline/index.ts';
import { loadProviders } from '../../src/config.ts';
import { report } from '../support/index.ts';

const { values } = parseArgs({
  options: { samples: { type: 'string', default: '5' }, threads: { type: 'string', default: '2' } },
});
initializeLogger({ pretty: false, level: 'error' });

const PROMPT = 'You are Ada, who answers for Rueda, a small bicycle shop and service in Seville.';
const GREETING = "Hi, I'm Ada from Rueda. How can I help you today?";
const QUESTION = 'Can you check the status of my order number 4417?';
const RESULT = JSON.stringify({ status: 'shipped yesterday by courier', eta: 'Friday' });
const tools = new llm.ToolContext([
  llm.tool({
    name: 'order_status',
    description: 'Looks up the status of an order by its number.',
    parameters: {
      type: 'object',
      properties: { order_id: { type: 'string', description: 'The order number' } },
      required: ['order_id'],
    },
    execute: async () => '',
  }),
]);
const instructions = agentInstructions({ prompt: PROMPT, language: 'en', visualAwareness: false });

const { llm: model, close } = await loadOfflineLanguageModel(loadProviders(process.env).modelsDir, {
  threads: Number(values.threads),
});

function conversation(): llm.ChatContext {
  const chatCtx = new llm.ChatContext();
  chatCtx.addMessage({ role: 'system', content: instructions });
  chatCtx.addMessage({ role: 'assistant', content: GREETING });
  chatCtx.addMessage({ role: 'user', content: QUESTION });
  return chatCtx;
}

/** One generation through chat(): when its first piece (words or a call) came, and its end. */
async function timed(chatCtx: llm.ChatContext) {
  const started = performance.now();
  let first: number | undefined;
  let text = '';
  const calls: llm.FunctionCall[] = [];
  for await (const chunk of model.chat({ chatCtx, toolCtx: tools })) {
    if ((chunk.delta?.content || chunk.delta?.toolCalls?.length) && first === undefined)
      first = performance.now() - started;
    text += chunk.delta?.content ?? '';
    calls.push(...(chunk.delta?.toolCalls ?? []));
  }
  return { firstMs: first ?? Number.NaN, totalMs: performance.now() - started, text, calls };
}

const callFirst: number[] = [];
const callTotal: number[] = [];
const answerFirst: number[] = [];
const answerTotal: number[] = [];
for (let sample = 0; sample < Number(values.samples); sample++) {
  // Another conversation in the sequence, as a job's process holds before its session.
  const other = new llm.ChatContext();
  other.addMessage({ role: 'system', content: `You are a weather bot number ${sample}.` });
  other.addMessage({ role: 'user', content: 'Will it rain?' });
  for await (const _ of model.chat({ chatCtx: other })) {
  }
  // The job reads ahead once the greeting is spoken (agent/conversation/index.ts).
  await model.prime(instructions, GREETING, tools);
  const chatCtx = conversation();
  const call = await timed(chatCtx);
  const callEvaluated = model.lastEvaluatedTokens;
  callFirst.push(call.firstMs);
  callTotal.push(call.totalMs);
  const made = call.calls[0];
  if (!made) {
    console.log(`sample ${sample}: no call (${JSON.stringify(call.text)})`);
    continue;
  }
  chatCtx.insert(made);
  chatCtx.insert(
    llm.FunctionCallOutput.create({ callId: made.callId, name: made.name, output: RESULT, isError: false }),
  );
  const answer = await timed(chatCtx);
  answerFirst.push(answer.firstMs);
  answerTotal.push(answer.totalMs);
  console.log(
    `sample ${sample}: ${made.name}(${made.args}) → ${JSON.stringify(answer.text.trim())} (prompt tokens evaluated: call ${callEvaluated}, answer ${model.lastEvaluatedTokens})`,
  );
}
await close();

console.log(`\nmachine: ${cpus().length} CPUs, ${cpus()[0]?.model}; ${new Date().toISOString()}; model ${model.model}`);
const show = (label: string, samples: number[]) => report(label, samples, { width: 44, digits: 0 });
show('question → first piece of the call generation', callFirst);
show('question → the call', callTotal);
show('result → the answer (written whole)', answerTotal);
show('result → first piece of the answer', answerFirst);
