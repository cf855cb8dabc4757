// A summary of every conversation (issue 32, point 6), on Postgres (docs/testing.md#engines): once a session with a
// visitor turn ends, its job asks the session's language model (here the real OpenAI plugin
// against its wire fake) for a summary; it shows on GET /v1/sessions/{id} and arrives as the
// `session.summary_ready` webhook. A session without a visitor turn has none; a model that
// fails leaves it null with a reason, and neither delays the session's end or its billing. The
// sweep gives up on a summary that never comes. A session ended while a tool waits on its backend
// gets its summary without waiting for that call (agents' own shutdown would).
import { beforeAll, describe, expect, test } from 'bun:test';
import type { Static } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import { TOOL_TIMEOUT_MAX_MS } from '../../src/contract/agent-tools.ts';
import type { SessionResponse } from '../../src/sessions/contract.ts';
import { sessions } from '../../src/sessions/schema.ts';
import { giveUpOnSummaries, SUMMARY_GIVEN_UP_DETAIL, SUMMARY_WAIT_SECONDS } from '../../src/sessions/summary.ts';
import { createAstronaut, startSession } from '../avatar/support.ts';
import { FakeChatFailure } from '../support/fakes/openai.ts';
import type { IdentityBody } from '../support/forms.ts';
import { sharedProviderFakes } from '../support/preload.ts';
import { oneEngine } from '../support/service.ts';
import { createIdentity } from '../support/session-start.ts';
import { suiteVisitorService } from '../support/suite-agent-service.ts';
import { withWebhooks } from '../support/suite-service.ts';
import { transcriptOf, typeTurn } from '../support/typed-turns.ts';
import { eventually, joinAsVisitor, type StartedSession, type Visitor } from '../support/visitor.ts';
import { LOOPBACK_WEBHOOKS_ENV } from '../support/webhook-subscription.ts';

const fakes = sharedProviderFakes();
/** What agent/conversation/summary.ts tells the model in English. */
const SUMMARY_INSTRUCTION = 'Summarise this conversation';
const SUMMARY = 'The visitor asked for the capital of France. Ada said it is Paris.';
const REPLY = 'The capital of France is Paris.';
/** A question no other test of the process asks (the fake's record is shared). */
const question = (session: StartedSession) => `What is the capital of France, ${session.room_name.slice(-6)}?`;

/** As GET /v1/sessions/{id} answers (its schema's type). */
type SessionBody = Static<typeof SessionResponse>;

const isSummaryRequest = (chat: { userTexts: string[] }) =>
  chat.userTexts.some((text) => text.includes(SUMMARY_INSTRUCTION));

describe.each(oneEngine('postgres'))('session summaries on %s', (engine) => {
  const suite = withWebhooks(suiteVisitorService(LOOPBACK_WEBHOOKS_ENV, { engine }), [
    'session.ended',
    'session.summary_ready',
  ]);
  let voiceIdentity: IdentityBody;

  beforeAll(async () => {
    voiceIdentity = await createIdentity(suite.account, {
      name: 'Ada',
      language: 'en',
      prompt: 'You are Ada, a tour guide in Paris.',
    });
  }, 120_000);

  const read = async (id: string) =>
    (await (await suite.account.call('GET', `/v1/sessions/${id}`)).json()) as SessionBody;
  /** For a summary that never came: the session as read, and how long ago the model was asked for it. */
  const explainSummary = (session: StartedSession) => async () => ({
    session: await read(session.room_name),
    asked_ms_ago: fakes.openai.chats
      .filter(
        (chat) => isSummaryRequest(chat) && chat.userTexts.some((text) => text.includes(session.room_name.slice(-6))),
      )
      .map((chat) => Date.now() - chat.at),
  });
  /** The session once its summary's status is `status` (30 s at most); `what` names the wait. */
  const summarySettled = (session: StartedSession, status: string, what: string) =>
    eventually(
      async () => {
        const current = await read(session.room_name);
        return current.summary_status === status ? current : undefined;
      },
      30_000,
      what,
      explainSummary(session),
    );
  /** The session once its summary is ready (30 s at most). */
  const summaryReady = (session: StartedSession) => summarySettled(session, 'ready', 'the summary');
  const summaryEvents = (id: string) =>
    suite.receiver
      .verified('/hooks', suite.secret)
      .filter((event) => event.type === 'session.summary_ready' && event.data.session_id === id);

  /** Types `text` once the agent is in, until the model has been asked it. */
  async function typeQuestion(visitor: Visitor, text: string): Promise<void> {
    await eventually(() => visitor.agent(), 20_000, 'the agent');
    await typeTurn(visitor, text, () => fakes.openai.chats.some((chat) => chat.userTexts.includes(text)));
  }

  async function end(session: StartedSession): Promise<{ ms: number; body: SessionBody }> {
    const startedAt = performance.now();
    const answer = await suite.account.call('POST', `/v1/sessions/${session.room_name}/end`);
    const ms = performance.now() - startedAt;
    expect(answer.status).toBe(200);
    return { ms, body: await read(session.room_name) };
  }

  test('a session with a typed turn gets the model’s summary, on the session and as a webhook', async () => {
    fakes.openai.respond((chat) => (isSummaryRequest(chat) ? SUMMARY : REPLY));
    const session = await startSession(suite.account, {
      identity_id: voiceIdentity.identity_id,
      avatar_enabled: false,
    });
    const visitor = await joinAsVisitor(session, { audioOnly: true });
    try {
      await typeQuestion(visitor, question(session));
      // The reply is part of what is summarised: wait for it to be in the transcript.
      await eventually(
        async () =>
          (await transcriptOf(suite.account, session.room_name)).some(
            (turn) => turn.role === 'agent' && turn.text === REPLY,
          ),
        20_000,
        'the reply in the transcript',
      );
    } finally {
      await visitor.leave().catch(() => undefined);
    }
    const { body: ended } = await end(session);
    expect(ended.status).toBe('ended');
    const body = await summaryReady(session);
    expect(body).toMatchObject({ summary: SUMMARY, summary_status: 'ready', summary_detail: null });
    // What the model was asked: the fixed instruction, and the conversation with its turns.
    const asked = fakes.openai.chats.find(
      (chat) => isSummaryRequest(chat) && chat.userTexts.some((text) => text.includes(question(session))),
    );
    expect(asked?.userTexts.at(-1)).toContain(`Visitor: ${question(session)}`);
    expect(asked?.userTexts.at(-1)).toContain(`Assistant: ${REPLY}`);
    const [event] = await suite.receiver.waitFor('the session.summary_ready webhook', () => {
      const events = summaryEvents(session.room_name);
      return events.length ? events : undefined;
    });
    expect(event!.data).toEqual({
      session_id: session.room_name,
      identity_id: voiceIdentity.identity_id,
      summary: SUMMARY,
      language: 'en',
    });
    // The end is announced before its summary.
    const types = suite.receiver
      .verified('/hooks', suite.secret)
      .filter((e) => e.data.session_id === session.room_name)
      .map((e) => e.type);
    expect(types).toEqual(['session.ended', 'session.summary_ready']);
  }, 120_000);

  test('a session without a visitor turn has no summary and sends no webhook; the sweep gives up on one never written', async () => {
    const session = await startSession(suite.account, {
      identity_id: voiceIdentity.identity_id,
      avatar_enabled: false,
    });
    const visitor = await joinAsVisitor(session, { audioOnly: true });
    // Greeted (an agent turn), but the visitor says nothing.
    await eventually(
      async () => (await transcriptOf(suite.account, session.room_name)).some((turn) => turn.role === 'agent'),
      30_000,
      'the greeting',
    );
    await visitor.leave();
    await end(session);
    await suite.receiver.waitFor('the session.ended webhook', () =>
      suite.receiver
        .verified('/hooks', suite.secret)
        .find((e) => e.type === 'session.ended' && e.data.session_id === session.room_name),
    );
    await Bun.sleep(3_000);
    expect(await read(session.room_name)).toMatchObject({
      summary: null,
      summary_status: 'none',
      summary_detail: null,
    });
    expect(summaryEvents(session.room_name)).toEqual([]);

    // A summary the job never reports (it died, say) is given up on once SUMMARY_WAIT_SECONDS have passed.
    const { db } = suite.service.services.database;
    await db.update(sessions).set({ summaryStatus: 'pending' }).where(eq(sessions.id, session.room_name));
    expect(await giveUpOnSummaries(db)).toBe(0);
    expect(await giveUpOnSummaries(db, new Date(Date.now() + (SUMMARY_WAIT_SECONDS + 1) * 1000))).toBeGreaterThan(0);
    expect(await read(session.room_name)).toMatchObject({
      summary: null,
      summary_status: 'failed',
      summary_detail: SUMMARY_GIVEN_UP_DETAIL,
    });
  }, 90_000);

  test('a failing model leaves the summary null with a reason, and delays neither the end nor its billing', async () => {
    // The summary's request fails slowly: the session's end must not wait for it.
    fakes.openai.respond(async (chat) => {
      if (!isSummaryRequest(chat)) return REPLY;
      await Bun.sleep(1_500);
      throw new FakeChatFailure(500);
    });
    const identity = await createAstronaut(suite.account, { name: 'Ada' });
    const session = await startSession(suite.account, { identity_id: identity.identity_id });
    const visitor = await joinAsVisitor(session, { audioOnly: true });
    try {
      await typeQuestion(visitor, question(session));
      await eventually(async () => (await read(session.room_name)).billed_minutes >= 1, 20_000, 'the first minute');
    } finally {
      await visitor.leave().catch(() => undefined);
    }
    const { ms, body: ended } = await end(session);
    expect(ms).toBeLessThan(1_500);
    expect(ended).toMatchObject({ status: 'ended', summary: null, summary_status: 'pending' });
    expect(ended.credits_charged).toBe(ended.billed_minutes * suite.service.config.credits.perAvatarMinute);
    const body = await summarySettled(session, 'failed', 'the failed summary');
    expect(body.summary).toBeNull();
    expect(body.summary_detail).toMatch(/language model/);
    // The end and the invoice stand as they were when the end answered.
    expect(body).toMatchObject({
      ended_at: ended.ended_at,
      billed_minutes: ended.billed_minutes,
      credits_charged: ended.credits_charged,
    });
    const summaryAskedAt = fakes.openai.chats.filter((chat) => isSummaryRequest(chat)).at(-1)!.at;
    expect(summaryAskedAt + 1_500).toBeGreaterThan(Date.parse(ended.ended_at!));
    expect(summaryEvents(session.room_name)).toEqual([]);
  }, 120_000);

  test('a session ended while a tool waits on its backend gets its summary before that call gives up', async () => {
    // The tool's backend never answers: the call ends at the tool's timeout (the control plane's wait).
    let called = false;
    let callClosedAt: number | undefined;
    const backend = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      idleTimeout: 60,
      async fetch(request) {
        called = true;
        request.signal.addEventListener('abort', () => {
          callClosedAt = Date.now();
        });
        await Bun.sleep(30_000);
        return new Response('too late');
      },
    });
    try {
      const tool = (await (
        await suite.account.call('POST', '/v1/tools', {
          body: JSON.stringify({
            name: 'find_booking',
            type: 'webhook',
            description: "Finds the visitor's booking.",
            url: `http://127.0.0.1:${backend.port}/booking`,
            timeout_ms: TOOL_TIMEOUT_MAX_MS,
          }),
          headers: { 'content-type': 'application/json' },
        })
      ).json()) as { tool_id: string };
      fakes.openai.respond((chat) => {
        if (isSummaryRequest(chat)) return SUMMARY;
        if (chat.messages.at(-1)?.role === 'tool') return 'Found it.';
        return /booking/.test(chat.userTexts.at(-1) ?? '')
          ? { toolCalls: [{ name: 'find_booking', arguments: {} }] }
          : REPLY;
      });
      const session = await startSession(suite.account, {
        identity_id: voiceIdentity.identity_id,
        avatar_enabled: false,
        tool_ids: [tool.tool_id],
      });
      const visitor = await joinAsVisitor(session, { audioOnly: true });
      try {
        await eventually(() => visitor.agent(), 20_000, 'the agent');
        await typeTurn(visitor, `Where is my booking, ${session.room_name.slice(-6)}?`, () => called);
      } finally {
        await visitor.leave().catch(() => undefined);
      }
      await end(session);
      const body = await summaryReady(session);
      expect(body.summary).toBe(SUMMARY);
      // Asked while the call still waited (with agents' shutdown, right after it gave up, 10 s on).
      const askedAt = fakes.openai.chats.filter((chat) => isSummaryRequest(chat)).at(-1)!.at;
      expect(callClosedAt === undefined || askedAt < callClosedAt).toBe(true);
    } finally {
      backend.stop(true);
    }
  }, 120_000);
});
