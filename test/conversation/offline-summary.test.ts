// The summary of a conversation on the offline models (issue 32, point 6): with no cloud key, the
// job summarises with the offline reply model, in the session's language, about what was said.
// An agent-only process with an environment without keys, as in offline-conversation.test.ts;
// the visitor types (Whisper is not the point here).
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { type OfflineAgentService, startOfflineAgentService } from '../support/offline-agent.ts';
import type { TestAccount } from '../support/service.ts';
import { createIdentity, postSessionStart } from '../support/session-start.ts';
import { type TranscriptTurn, transcriptOf, typeTurn } from '../support/typed-turns.ts';
import { eventually, joinAsVisitor, type StartedSession } from '../support/visitor.ts';

let offline: OfflineAgentService;
let account: TestAccount;

beforeAll(async () => {
  offline = await startOfflineAgentService('offline-summary');
  ({ account } = offline);
}, 120_000);

afterAll(() => offline?.stop());

/** What the agent process logged about a session. */
function jobLines(sessionId: string): string {
  const lines = offline
    .agentOutput()
    .split('\n')
    .filter((line) => line.includes(sessionId));
  return lines.filter((line) => !line.includes('event loop')).join('\n');
}

async function summaryOf(
  language: string,
  prompt: string,
  question: string,
): Promise<{ summary: string; turns: TranscriptTurn[] }> {
  const identity = await createIdentity(account, {
    name: 'Ada',
    language,
    prompt,
    voice_id: language === 'en' ? undefined : 'adam',
  });
  const started = await postSessionStart(account, { identity_id: identity.identity_id, avatar_enabled: false });
  expect(started.status).toBe(200);
  const session = (await started.json()) as StartedSession;
  const visitor = await joinAsVisitor(session, { audioOnly: true });
  const transcript = () => transcriptOf(account, session.room_name);
  try {
    await eventually(() => visitor.agent(), 60_000, 'the agent');
    await typeTurn(visitor, question, async () => (await transcript()).some((turn) => turn.role === 'user'), 90_000);
    // The reply, if it comes soon: the summary is of whatever the conversation holds by the end.
    await eventually(
      async () => (await transcript()).filter((turn) => turn.role === 'agent').length >= 2,
      30_000,
      'the reply',
    ).catch(() => console.log(jobLines(session.room_name)));
  } finally {
    await visitor.leave().catch(() => undefined);
    await account.call('POST', `/v1/sessions/${session.room_name}/end`);
  }
  const body = await eventually(
    async () => {
      const current = (await (await account.call('GET', `/v1/sessions/${session.room_name}`)).json()) as {
        summary: string | null;
        summary_status: string;
        summary_detail: string | null;
      };
      return current.summary_status === 'ready' || current.summary_status === 'failed' ? current : undefined;
    },
    60_000,
    'the summary',
  ).catch((error: unknown) => {
    console.log(jobLines(session.room_name));
    throw error;
  });
  expect(body).toMatchObject({ summary_status: 'ready', summary_detail: null });
  return { summary: body.summary!, turns: await transcript() };
}

test('the offline model summarises the conversation in its language, about its topic', async () => {
  const { summary, turns } = await summaryOf(
    'en',
    'You are Ada, a friendly guide at the city museum. Answer in one short sentence.',
    'What time does the museum open on Sunday?',
  );
  console.log(`offline summary: ${JSON.stringify(summary)} of ${JSON.stringify(turns)}`);
  expect(summary.length).toBeGreaterThan(10);
  expect(summary.match(/[.!?…](\s|$)/g)?.length ?? 1).toBeLessThanOrEqual(3);
  expect(summary.toLowerCase()).toMatch(/museum|sunday|open/);
  // English only: the reply model writes English's letters in an English session.
  expect(summary).toMatch(/^[\x20-\x7e]+$/);
}, 240_000);

test('a Spanish session is summarised in Spanish', async () => {
  const { summary, turns } = await summaryOf(
    'es',
    'Eres Ada, una guía amable del museo de la ciudad. Responde con una frase corta.',
    '¿A qué hora abre el museo el domingo?',
  );
  console.log(`offline summary (es): ${JSON.stringify(summary)} of ${JSON.stringify(turns)}`);
  expect(summary.length).toBeGreaterThan(10);
  expect(summary.toLowerCase()).toMatch(/museo|domingo|abre|hora/);
}, 240_000);
