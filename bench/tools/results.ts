// Whether the offline reply model says a tool's result as it is (issue 45 point 5): for each of
// result-cases.ts's 40 results, the conversation up to the call (the greeting, the visitor's
// question, the call), the result the model reads, and the reply it makes, through OfflineLLM
// as the agent runs it (fallback-replies.ts included). A reply is faithful when it says each of
// the case's facts and none of what it must never say (the opposite, a refusal of a result that
// came). Prints each reply and the share faithful, by kind and language.
//   npm run bench -- bench/tools/results.ts [--limit N] [--threads 2]
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { initializeLogger, llm } from '@livekit/agents';
import { agentInstructions } from '../../agent/conversation/instructions.ts';
import { loadOfflineLanguageModel } from '../../agent/providers/offline/index.ts';
import { loadProviders } from '../../src/config.ts';
import { RESULT_CASES, RESULT_TOOLS, type ResultCase } from './result-cases.ts';

const { values } = parseArgs({ options: { limit: { type: 'string' }, threads: { type: 'string', default: '2' } } });
initializeLogger({ pretty: false, level: 'error' });

const PROMPT = 'You are Ada, who answers for Rueda, a small bicycle shop and service in Seville.';
const GREETING = {
  en: "Hi, I'm Ada from Rueda. How can I help you today?",
  es: 'Hola, soy Ada de Rueda. ¿En qué puedo ayudarte?',
};
const toolCtx = new llm.ToolContext(
  RESULT_TOOLS.map((tool) =>
    llm.tool({ name: tool.name, description: tool.description, parameters: tool.parameters, execute: async () => '' }),
  ),
);

const fold = (text: string) =>
  text
    .toLowerCase()
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .replace(/[’]/g, "'");

function faithful(reply: string, c: ResultCase): { ok: boolean; missing: string[]; wrong: string[] } {
  const said = fold(reply);
  const missing = c.says.filter((pattern) => !pattern.test(said)).map(String);
  const wrong = c.never.filter((pattern) => pattern.test(said)).map(String);
  return { ok: said.trim() !== '' && missing.length === 0 && wrong.length === 0, missing, wrong };
}

const { llm: model, close } = await loadOfflineLanguageModel(loadProviders(process.env).modelsDir, {
  threads: Number(values.threads),
});
const cases = RESULT_CASES.slice(0, values.limit ? Number(values.limit) : undefined);
const results: { c: ResultCase; ok: boolean }[] = [];
const latencies: number[] = [];
for (const [index, c] of cases.entries()) {
  model.answerIn(c.language);
  const chatCtx = new llm.ChatContext();
  chatCtx.addMessage({
    role: 'system',
    content: agentInstructions({ prompt: PROMPT, language: c.language, visualAwareness: false }),
  });
  chatCtx.addMessage({ role: 'assistant', content: GREETING[c.language] });
  chatCtx.addMessage({ role: 'user', content: c.question });
  const callId = `call_${index}`;
  chatCtx.insert(llm.FunctionCall.create({ callId, name: c.call.name, args: JSON.stringify(c.call.args) }));
  chatCtx.insert(
    llm.FunctionCallOutput.create({ callId, name: c.call.name, output: JSON.stringify(c.result), isError: false }),
  );
  const started = performance.now();
  let reply = '';
  for await (const chunk of model.chat({ chatCtx, toolCtx })) reply += chunk.delta?.content ?? '';
  latencies.push(performance.now() - started);
  const verdict = faithful(reply, c);
  results.push({ c, ok: verdict.ok });
  const why = verdict.ok
    ? ''
    : ` (missing ${verdict.missing.join(', ') || '-'}; wrong ${verdict.wrong.join(', ') || '-'})`;
  console.log(
    `${verdict.ok ? 'faithful  ' : 'UNFAITHFUL'} [${c.language} ${c.kind}] ${c.result.slice(0, 60)} → ${JSON.stringify(reply.trim())}${why}`,
  );
}
await close();

const share = (list: { ok: boolean }[]) =>
  `${list.filter((r) => r.ok).length} of ${list.length} (${Math.round((100 * list.filter((r) => r.ok).length) / Math.max(1, list.length))}%)`;
const sorted = [...latencies].sort((a, b) => a - b);
const pct = (p: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0);
console.log(`\nmachine: ${cpus().length} CPUs, ${cpus()[0]?.model}; ${new Date().toISOString()}; model ${model.model}`);
console.log(`faithful: ${share(results)}`);
for (const kind of ['found', 'not_found', 'refused', 'error', 'empty'] as const)
  console.log(`  ${kind}: ${share(results.filter((r) => r.c.kind === kind))}`);
for (const language of ['en', 'es'] as const)
  console.log(`  ${language}: ${share(results.filter((r) => r.c.language === language))}`);
console.log(`whole reply: p50 ${pct(0.5)} ms, p95 ${pct(0.95)} ms`);
