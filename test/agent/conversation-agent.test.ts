// The conversation's agent as agent/conversation/conversation-agent.ts sets it up: its
// instructions keep what the session started with when the backend adds context (a context
// order): a returning visitor's memory rules stayed out of them before (the order's
// instructions were built without them). With the offline model and documents, the rule for
// passages is in the instructions once, not in each turn (which re-read them every turn).
import { expect, test } from 'bun:test';
import type { voice } from '@livekit/agents';
import { conversationAgent } from '../../agent/conversation/conversation-agent.ts';
import { REMEMBERED_RULE } from '../../agent/conversation/instructions.ts';
import { standingKnowledgeRule } from '../../agent/conversation/knowledge.ts';
import type { TurnQuality } from '../../agent/conversation/quality.ts';
import { SpokenLanguages } from '../../agent/conversation/spoken-languages.ts';
import type { TranscriptLog } from '../../agent/conversation/transcripts.ts';
import type { AgentLogger } from '../../agent/logging.ts';
import type { SessionProviders } from '../../agent/providers/index.ts';
import { loadProviders } from '../../src/config.ts';
import type { ParsedDispatch } from '../../src/contract/index.ts';

const logger = { info() {}, warn() {}, error() {}, debug() {} } as unknown as AgentLogger;

function agentFor(metadata: Partial<ParsedDispatch>, llmName = 'fake') {
  return conversationAgent({
    metadata: {
      language: 'en',
      visual_awareness: false,
      context: 'The visitor is on the pricing page.',
      identity: { identity_id: 'idn_1', name: 'Ada', prompt: 'You are Ada, who sells bicycles.' },
      report_token: 't',
      visitor_identity: 'visitor_1',
      tools: [],
      ...metadata,
    } as unknown as ParsedDispatch,
    settings: loadProviders({}),
    providers: { names: { stt: 'fake', llm: llmName, tts: 'fake' }, speakIn() {} } as unknown as SessionProviders,
    languages: new SpokenLanguages('en'),
    transcripts: {} as TranscriptLog,
    quality: {} as TurnQuality,
    camera: null,
    reporter: async () => 'accepted',
    participant: () => undefined,
    session: () => ({}) as voice.AgentSession,
    logger,
  });
}

test("a context order keeps the start's context and a returning visitor's memory rule", () => {
  const returning = agentFor({
    memory: { facts: ['Their name is Zofia.'] },
  });
  expect(returning.instructions).toContain(REMEMBERED_RULE);
  const ordered = returning.instructionsWith(['They asked about e-bikes.']);
  expect(ordered).toContain(REMEMBERED_RULE);
  expect(ordered).toContain('The visitor is on the pricing page.');
  expect(ordered).toContain('They asked about e-bikes.');
  // A visitor the service does not remember: no such rule, before or after.
  const stranger = agentFor({ memory: null });
  expect(stranger.instructions).not.toContain(REMEMBERED_RULE);
  expect(stranger.instructionsWith(['They asked about e-bikes.'])).not.toContain(REMEMBERED_RULE);
});

test('the offline model with documents reads the rule for passages in its instructions; a cloud model in each turn', () => {
  const url = 'http://127.0.0.1:1/internal/sessions/ses_1/knowledge';
  const offline = agentFor({ knowledge_url: url, language: 'es' }, 'offline');
  expect(offline.instructions).toContain(standingKnowledgeRule());
  expect(offline.instructionsWith(['They asked about e-bikes.'])).toContain(standingKnowledgeRule());
  expect(agentFor({ knowledge_url: url }, 'openai-compatible').instructions).not.toContain(standingKnowledgeRule());
  expect(agentFor({}, 'offline').instructions).not.toContain(standingKnowledgeRule());
});
