// What the offline model remembers of a visitor (issue 44 point 2): for each conversation of
// conversations.json, the facts it wrote (raw) and those kept (grounded and merged with what was
// remembered, agent/conversation/memory.ts), and the time. `npm run bench -- bench/memory/index.ts`.
import { readFileSync } from 'node:fs';
import { llm } from '@livekit/agents';
import { writeMemory } from '../../agent/conversation/memory.ts';
import { loadOfflineModels } from '../../agent/providers/offline/index.ts';
import { loadProviders } from '../../src/config.ts';
import type { SpokenLanguage } from '../../src/contract/index.ts';
import { silentLogger } from '../support/index.ts';

interface Conversation {
  language: SpokenLanguage;
  remembered: string[];
  turns: ['user' | 'assistant', string][];
  /** Words a kept fact must mention (lower case), each in some fact. */
  expect: string[];
}
const { conversations } = JSON.parse(readFileSync(new URL('./conversations.json', import.meta.url), 'utf8')) as {
  conversations: Conversation[];
};

const models = await loadOfflineModels({ modelsDir: loadProviders(process.env).modelsDir });
const model = models.llm();

let found = 0;
let wanted = 0;
const times: number[] = [];
for (const [i, conversation] of conversations.entries()) {
  const history = llm.ChatContext.empty();
  for (const [role, content] of conversation.turns) history.addMessage({ role, content });
  let raw = '';
  const started = performance.now();
  const report = await writeMemory({
    writeJson: async (question, schema, timeoutMs) => {
      const answer = await model.writeJson(question, schema, timeoutMs);
      raw = answer.text;
      return answer;
    },
    history,
    remembered: conversation.remembered,
    language: conversation.language,
    transcriptChars: 4_000,
    logger: silentLogger,
  });
  times.push(performance.now() - started);
  const kept = (report?.facts ?? []).join(' ').toLowerCase();
  const hits = conversation.expect.filter((word) => kept.includes(word));
  found += hits.length;
  wanted += conversation.expect.length;
  console.log(
    `#${i + 1} (${conversation.language}) ${hits.length}/${conversation.expect.length} ${Math.round(times.at(-1)!)} ms`,
  );
  console.log(`  raw:  ${raw.replace(/\s+/g, ' ').slice(0, 400)}`);
  console.log(`  kept: ${JSON.stringify(report?.facts ?? report?.detail)}`);
}
times.sort((a, b) => a - b);
console.log(
  `expected words kept: ${found}/${wanted}; p50 ${Math.round(times[Math.floor(times.length / 2)]!)} ms, max ${Math.round(times.at(-1)!)} ms`,
);
process.exit(0);
