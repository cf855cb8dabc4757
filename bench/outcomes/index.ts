// bench/outcomes: how well the offline model fills an outcome (issue 44), over the conversations
// in conversations.json (English and Spanish, each with the outcome a careful reader would
// write). The same code the job runs (agent/conversation/outcome.ts: the question, the grammar,
// the grounding) on the offline reply model, one conversation at a time. Prints per field and in
// all: right, missed (said but null), wrong (another value), invented (a value nobody said), and
// the time each outcome took (the larger part of end -> session.outcome_ready; the rest is the
// job's close and its summary, and one report).
//   bun bench/outcomes/index.ts [--raw]     --raw: no grounding (the model's own answer)
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { llm } from '@livekit/agents';
import { writeOutcome } from '../../agent/conversation/outcome.ts';
import { loadOfflineModels } from '../../agent/providers/offline/index.ts';
import { loadProviders } from '../../src/config.ts';
import type { SpokenLanguage } from '../../src/contract/index.ts';
import { LEAD_OUTCOME_SCHEMA } from '../../src/outcomes/contract.ts';
import { silentLogger } from '../support/index.ts';

const { values: args } = parseArgs({ options: { raw: { type: 'boolean', default: false } } });

const SCHEMA = {
  type: 'object',
  properties: {
    ...LEAD_OUTCOME_SCHEMA.properties,
    company: { type: 'string', description: 'The company the visitor works for' },
    team_size: { type: 'integer', description: 'How many people work in the visitor’s team or company' },
  },
};

interface Conversation {
  language: SpokenLanguage;
  turns: ['user' | 'assistant', string][];
  expected: Record<string, unknown>;
}
const { conversations } = JSON.parse(readFileSync(new URL('./conversations.json', import.meta.url), 'utf8')) as {
  conversations: Conversation[];
};

const models = await loadOfflineModels({ modelsDir: loadProviders(process.env).modelsDir });
const model = models.llm();
const same = (a: unknown, b: unknown) =>
  typeof a === 'string' && typeof b === 'string' ? a.trim().toLowerCase() === b.trim().toLowerCase() : a === b;

const tally = new Map<string, { right: number; missed: number; wrong: number; invented: number }>();
const times: number[] = [];
const failures: string[] = [];
for (const [i, conversation] of conversations.entries()) {
  const history = llm.ChatContext.empty();
  for (const [role, content] of conversation.turns) history.addMessage({ role, content });
  const started = performance.now();
  let rawAnswer: Record<string, unknown> | undefined;
  const report = await writeOutcome({
    writeJson: async (question, schema, timeoutMs) => {
      const answer = await model.writeJson(question, schema, timeoutMs);
      if (args.raw) rawAnswer = JSON.parse(answer.text) as Record<string, unknown>;
      return answer;
    },
    history,
    schema: SCHEMA,
    language: conversation.language,
    transcriptChars: 4_000,
    logger: silentLogger,
  });
  times.push(performance.now() - started);
  const got = args.raw ? rawAnswer : report?.values;
  if (!got) {
    failures.push(`#${i + 1}: ${report?.detail ?? 'no report'}`);
    continue;
  }
  for (const [field, expected] of Object.entries(conversation.expected)) {
    const value = got[field] ?? null;
    const row = tally.get(field) ?? { right: 0, missed: 0, wrong: 0, invented: 0 };
    if (same(value, expected)) row.right++;
    else if (expected === null) row.invented++;
    else if (value === null) row.missed++;
    else row.wrong++;
    tally.set(field, row);
    if (!same(value, expected))
      console.log(
        `#${i + 1} (${conversation.language}) ${field}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(value)}`,
      );
  }
}
await models.close();

const sorted = [...times].sort((a, b) => a - b);
const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!);
console.log(
  `\n${conversations.length} conversations (${args.raw ? 'the model’s raw answer' : 'grounded, as the job keeps it'})`,
);
console.log('| field | right | missed | wrong | invented |\n|---|---:|---:|---:|---:|');
const total = { right: 0, missed: 0, wrong: 0, invented: 0 };
for (const [field, row] of tally) {
  console.log(`| ${field} | ${row.right} | ${row.missed} | ${row.wrong} | ${row.invented} |`);
  for (const key of Object.keys(total) as (keyof typeof total)[]) total[key] += row[key];
}
const fields = total.right + total.missed + total.wrong + total.invented;
console.log(`| all | ${total.right} | ${total.missed} | ${total.wrong} | ${total.invented} |`);
console.log(`field accuracy ${((100 * total.right) / fields).toFixed(1)} %; invented ${total.invented}`);
console.log(`time per outcome: p50 ${at(0.5)} ms, p95 ${at(0.95)} ms, max ${at(1)} ms`);
if (failures.length) console.log(`no outcome: ${failures.join('; ')}`);
process.exit(0);
