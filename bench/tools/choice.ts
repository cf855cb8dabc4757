// Tool choice of the offline reply model (Qwen2.5-Coder-0.5B through OfflineLLM, the agent's
// path: the same prompt, the same function calling and JSON reading): for each request of
// requests.ts, typed after the session's greeting, whether the model called the right tool with
// the right arguments, a wrong one, or none; and for the requests no tool fits, whether it
// called anything (a false call).
//   npm run bench -- bench/tools/choice.ts [--limit N] [--threads 2]
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { initializeLogger, llm } from '@livekit/agents';
import { agentInstructions } from '../../agent/conversation/instructions.ts';
import { loadOfflineLanguageModel } from '../../agent/providers/offline/index.ts';
import { loadProviders } from '../../src/config.ts';
import { REQUESTS, TOOLS, type ToolRequest } from './requests.ts';

const { values } = parseArgs({ options: { limit: { type: 'string' }, threads: { type: 'string', default: '2' } } });
initializeLogger({ pretty: false, level: 'error' });

const PROMPT =
  "You are Ada, the receptionist of Smile Dental Clinic. You help visitors with their appointments, the clinic's opening hours and its prices.";
const GREETING: Record<string, string> = {
  en: "Hi, I'm Ada from Smile Dental Clinic. How can I help you today?",
  es: 'Hola, soy Ada de Smile Dental Clinic. ¿En qué puedo ayudarte?',
};
const toolCtx = new llm.ToolContext(
  TOOLS.map((tool) =>
    llm.tool({ name: tool.name, description: tool.description, parameters: tool.parameters, execute: async () => '' }),
  ),
);

type Verdict = 'right' | 'wrong_args' | 'wrong_tool' | 'no_call' | 'false_call' | 'no_call_right';

function judge(request: ToolRequest, calls: llm.FunctionCall[]): Verdict {
  if (!request.expect) return calls.length ? 'false_call' : 'no_call_right';
  const call = calls[0];
  if (!call) return 'no_call';
  if (call.name !== request.expect.name) return 'wrong_tool';
  const args = JSON.parse(call.args || '{}') as Record<string, unknown>;
  const argsRight = Object.entries(request.expect.args).every(([key, accepted]) =>
    accepted.some((word) =>
      String(args[key] ?? '')
        .toLowerCase()
        .includes(word),
    ),
  );
  return argsRight ? 'right' : 'wrong_args';
}

const { llm: model, close } = await loadOfflineLanguageModel(loadProviders(process.env).modelsDir, {
  threads: Number(values.threads),
});
const requests = REQUESTS.slice(0, values.limit ? Number(values.limit) : undefined);
const verdicts: Verdict[] = [];
const latencies: number[] = [];
for (const request of requests) {
  model.answerIn(request.language);
  const chatCtx = new llm.ChatContext();
  chatCtx.addMessage({
    role: 'system',
    content: agentInstructions({ prompt: PROMPT, language: request.language, visualAwareness: false }),
  });
  chatCtx.addMessage({ role: 'assistant', content: GREETING[request.language] ?? GREETING.en! });
  chatCtx.addMessage({ role: 'user', content: request.text });
  const started = performance.now();
  let text = '';
  const calls: llm.FunctionCall[] = [];
  for await (const chunk of model.chat({ chatCtx, toolCtx })) {
    text += chunk.delta?.content ?? '';
    calls.push(...(chunk.delta?.toolCalls ?? []));
  }
  latencies.push(performance.now() - started);
  const verdict = judge(request, calls);
  verdicts.push(verdict);
  const said = calls.length ? calls.map((c) => `${c.name}(${c.args})`).join(' ') : JSON.stringify(text.trim());
  console.log(`${verdict.padEnd(13)} [${request.language}] ${request.text} → ${said}`);
}
await close();

const count = (...kinds: Verdict[]) => verdicts.filter((v) => kinds.includes(v)).length;
const withTool = requests.filter((r) => r.expect).length;
const without = requests.length - withTool;
const sorted = [...latencies].sort((a, b) => a - b);
const pct = (p: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0);
console.log(`\nmachine: ${cpus().length} CPUs, ${cpus()[0]?.model}; ${new Date().toISOString()}; model ${model.model}`);
console.log(`requests a tool fits: ${withTool}`);
console.log(`  right tool, right arguments: ${count('right')} (${Math.round((100 * count('right')) / withTool)}%)`);
console.log(`  right tool, wrong arguments: ${count('wrong_args')}`);
console.log(`  wrong tool: ${count('wrong_tool')}`);
console.log(`  no call: ${count('no_call')}`);
console.log(`requests no tool fits: ${without}`);
console.log(`  answered without a call: ${count('no_call_right')}; false calls: ${count('false_call')}`);
console.log(`time to the call or the whole reply: p50 ${pct(0.5)} ms, p95 ${pct(0.95)} ms`);
