// Directing a session from its start (issue 32, docs/api.md#sessions-context,
// #sessions-idle) with the real agent worker, a real LiveKit and rtc-node visitors, the cloud
// providers' wire fakes: the context reaches the model's prompt from the first reply (the
// identity unchanged), the greeting is said exactly (and "" says nothing until the visitor
// does), and a visitor who goes quiet is asked once, in the session's language, then the
// session ends `idle`, with the notice first and billed up to then; a visitor who answers is
// not ended; 0 never asks. The offline model's side is session-orders-offline.test.ts (with the orders).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Static } from '@sinclair/typebox';
import { IDLE_QUESTIONS } from '../../agent/conversation/idle.ts';
import { CONTEXT_HEADING } from '../../agent/conversation/instructions.ts';
import { NOTICE_TOPIC } from '../../src/contract/index.ts';
import type { SessionResponse } from '../../src/sessions/contract.ts';
import * as fx from '../fixtures/index.ts';
import { file, type IdentityBody, type identityForm } from '../support/forms.ts';
import { sharedProviderFakes } from '../support/preload.ts';
import type { TestAccount, TestService } from '../support/service.ts';
import { createIdentity, postSessionStart } from '../support/session-start.ts';
import { typeUntilTaken } from '../support/typed-turns.ts';
import { eventually, joinAsVisitor, type StartedSession, sessionEnded, type Visitor } from '../support/visitor.ts';
import { startVisitorService } from '../support/visitor-service.ts';

const fakes = sharedProviderFakes();
const PER_MINUTE = 10;
/** Seconds per billed "minute": short, so an idle ending shows what was billed up to it. */
const INTERVAL_SECONDS = 2;

interface Turn {
  role: 'user' | 'agent';
  text: string;
  language: string | null;
}
/** As GET /v1/sessions/{id} answers (its schema's type). */
type SessionBody = Static<typeof SessionResponse>;

describe('a session directed from its start', () => {
  let service: TestService;
  let account: TestAccount;

  beforeAll(async () => {
    ({ service, account } = await startVisitorService(
      {
        // One job for each of the four sessions that run at once below.
        AGENT_MAX_JOBS: '4',
        CREDITS_PER_AVATAR_MINUTE: String(PER_MINUTE),
        BILLING_INTERVAL_SECONDS: String(INTERVAL_SECONDS),
      },
      { credits: 100_000 },
    ));
  });
  afterAll(() => service.stop());

  const identity = async (fields: Parameters<typeof identityForm>[0] = {}) =>
    await createIdentity(account, { language: 'en', ...fields });
  /** Started; a 503 (every slot taken while an earlier session's job still closes) is tried again after its Retry-After. */
  const start = async (body: Record<string, unknown>) => {
    for (let attempt = 1; ; attempt++) {
      const response = await postSessionStart(account, body);
      if (response.status === 503 && attempt < 10) {
        await Bun.sleep(Number(response.headers.get('retry-after') ?? 1) * 1000);
        continue;
      }
      expect(response.status).toBe(200);
      return (await response.json()) as StartedSession;
    }
  };
  const read = async (id: string) => (await (await account.call('GET', `/v1/sessions/${id}`)).json()) as SessionBody;
  const turns = async (id: string) =>
    ((await (await account.call('GET', `/v1/sessions/${id}/transcript`)).json()) as { turns: Turn[] }).turns;
  const agentTurns = async (id: string) => (await turns(id)).filter((t) => t.role === 'agent').map((t) => t.text);
  /** Typed chat, sent again (2 s apart, chat.ts's limit) until the conversation has taken it. */
  const type = (visitor: Visitor, text: string, reached: () => boolean | Promise<boolean>) =>
    typeUntilTaken(visitor.room.localParticipant!, text, reached, `"${text}" to reach the conversation`);
  const ended = (id: string, timeoutMs: number) => sessionEnded<SessionBody>(account, id, timeoutMs);

  test("the context is in the model's prompt from the first reply, the identity unchanged; the greeting is said exactly", async () => {
    const marker = `Marker: direction-${crypto.randomUUID().slice(0, 8)}.`;
    const prompt = `You are Ada, a shop assistant. ${marker}`;
    const ada = await identity({ prompt });
    const context = "The visitor's name is Zofia.\nHer last order, #4417, shipped yesterday.";
    const greeting = 'Welcome back, Zofia! Your order is on its way.';
    fakes.openai.respond(() => 'Your name is Zofia.');
    const session = await start({ identity_id: ada.identity_id, avatar_enabled: false, context, greeting });
    const visitor = await joinAsVisitor(session, { audioOnly: true });
    try {
      const first = await eventually(async () => (await agentTurns(session.room_name))[0], 30_000, 'the greeting');
      expect(first).toBe(greeting);
      const chats = () => fakes.openai.chats.filter((chat) => chat.system.includes(marker));
      await type(visitor, 'What is my name?', () => chats().length > 0);
      // The first request the model got for this session already carries the context, after the identity's prompt.
      const firstChat = chats()[0]!;
      expect(firstChat.userTexts).toEqual(['What is my name?']);
      expect(firstChat.system).toContain(`${prompt}\n\n${CONTEXT_HEADING}\n${context}`);
      // The greeting is in the conversation the model reads, said by the agent.
      expect(JSON.stringify(firstChat.messages)).toContain(greeting);
      await eventually(
        async () => (await agentTurns(session.room_name)).includes('Your name is Zofia.'),
        20_000,
        'the reply',
      );
      // For this session only: the identity's prompt is what it was.
      const stored = (await (await account.call('GET', `/v1/identities/${ada.identity_id}`)).json()) as IdentityBody;
      expect(stored.prompt).toBe(prompt);
    } finally {
      await account.call('POST', `/v1/sessions/${session.room_name}/end`);
      await visitor.leave().catch(() => undefined);
    }
  }, 90_000);

  // The four below wait on the clock (greetings, idle questions, endings), each in its own
  // session: they wait together. Their replies come from one responder, told apart by what the
  // visitor typed.
  const replies = (chat: { userTexts: string[] }) =>
    chat.userTexts.at(-1) === 'Hi!' ? 'Hello there.' : 'Good to have you.';

  test.concurrent('greeting "" says nothing until the visitor does', async () => {
    fakes.openai.respond(replies);
    const session = await start({ greeting: '', idle_timeout_seconds: 0 });
    const visitor = await joinAsVisitor(session, { audioOnly: true });
    try {
      await eventually(() => visitor.agent(), 20_000, 'the agent');
      // A greeting would have been said within ~4 s of the visitor hearing the agent (index.ts).
      await Bun.sleep(7_000);
      expect(await turns(session.room_name)).toEqual([]);
      await type(visitor, 'Hi!', async () => (await turns(session.room_name)).length > 0);
      const said = await eventually(
        async () => {
          const all = await turns(session.room_name);
          return all.some((t) => t.role === 'agent') ? all : undefined;
        },
        20_000,
        'the reply',
      );
      expect(said[0]).toMatchObject({ role: 'user', text: 'Hi!' });
      expect(said.filter((t) => t.role === 'agent').map((t) => t.text)).toEqual(['Hello there.']);
    } finally {
      await account.call('POST', `/v1/sessions/${session.room_name}/end`);
      await visitor.leave().catch(() => undefined);
    }
  }, 90_000);

  test.concurrent("a quiet visitor is asked in the session's language, then the session ends `idle`: notice first, billed up to then", async () => {
    // Spanish needs a multilingual voice: a voice sample, cloned at the ElevenLabs fake.
    const lucia = await identity({ name: 'Lucía', audio: file(fx.wav({ seconds: 10 }), 'v.wav') });
    const before = (await service.services.ledger.balance(account.accountId))!;
    const session = await start({ identity_id: lucia.identity_id, language: 'es', idle_timeout_seconds: 3 });
    const joinedAt = Date.now();
    const visitor = await joinAsVisitor(session, { audioOnly: true });
    const gone = await Promise.race([visitor.disconnected, Bun.sleep(60_000).then(() => 'timeout')]);
    // The notice came before the room closed: it is in what the visitor had received when disconnected.
    const noticesAtDisconnect = [...visitor.notices];
    try {
      expect(gone).not.toBe('timeout');
      expect(noticesAtDisconnect).toContainEqual({
        topic: NOTICE_TOPIC,
        payload: { type: 'idle', session_id: session.room_name },
      });
      const session_ = await ended(session.room_name, 10_000);
      expect(session_.end_reason).toBe('idle');
      // Asked once, in Spanish, after the greeting; nobody spoke.
      const said = await turns(session.room_name);
      expect(said.map((t) => t.role)).toEqual(['agent', 'agent']);
      expect(said[1]).toMatchObject({ text: IDLE_QUESTIONS.es, language: 'es' });
      // Two silences of 3 s and what was said: not sooner, and well before any other limit.
      const lasted = Date.parse(session_.ended_at!) - joinedAt;
      expect(lasted).toBeGreaterThan(6_000);
      expect(lasted).toBeLessThan(40_000);
      // Billed as every ending: the minutes the visitor was in with the avatar, the hold given back.
      expect(session_.billed_minutes).toBeGreaterThanOrEqual(2);
      expect(session_.billed_minutes).toBeLessThanOrEqual(Math.ceil(session_.visitor_seconds / INTERVAL_SECONDS) + 1);
      expect(session_.credits_charged).toBe(session_.billed_minutes * PER_MINUTE);
      expect(await service.services.ledger.balance(account.accountId)).toBe(before - session_.credits_charged);
    } finally {
      await account.call('POST', `/v1/sessions/${session.room_name}/end`);
      await visitor.leave().catch(() => undefined);
    }
  }, 90_000);

  test.concurrent('a visitor who answers the question is not ended: the count starts again', async () => {
    fakes.openai.respond(replies);
    const session = await start({ idle_timeout_seconds: 3 });
    const visitor = await joinAsVisitor(session, { audioOnly: true });
    try {
      await eventually(
        async () => (await agentTurns(session.room_name)).includes(IDLE_QUESTIONS.en),
        30_000,
        'the idle question',
      );
      await type(visitor, "Yes, I'm here.", async () =>
        (await turns(session.room_name)).some((t) => t.role === 'user'),
      );
      await eventually(
        async () => (await agentTurns(session.room_name)).includes('Good to have you.'),
        20_000,
        'the reply',
      );
      // Without the answer it would have ended ~3 s after the question: it runs on.
      await Bun.sleep(4_000);
      expect((await read(session.room_name)).status).toBe('running');
      // Quiet again: asked again, then ended.
      const session_ = await ended(session.room_name, 30_000);
      expect(session_.end_reason).toBe('idle');
      const said = await turns(session.room_name);
      expect(said.filter((t) => t.text === IDLE_QUESTIONS.en)).toHaveLength(2);
      expect(said.at(-1)).toMatchObject({ role: 'agent', text: IDLE_QUESTIONS.en });
    } finally {
      await account.call('POST', `/v1/sessions/${session.room_name}/end`);
      await visitor.leave().catch(() => undefined);
    }
  }, 90_000);

  test.concurrent('idle_timeout_seconds 0 never asks nor ends', async () => {
    const greeting = 'Hello.';
    const session = await start({ greeting, idle_timeout_seconds: 0 });
    const visitor = await joinAsVisitor(session, { audioOnly: true });
    try {
      await eventually(async () => (await agentTurns(session.room_name)).length > 0, 30_000, 'the greeting');
      await Bun.sleep(10_000);
      expect(await agentTurns(session.room_name)).toEqual([greeting]);
      expect((await read(session.room_name)).status).toBe('running');
    } finally {
      await account.call('POST', `/v1/sessions/${session.room_name}/end`);
      await visitor.leave().catch(() => undefined);
    }
  }, 60_000);
});
