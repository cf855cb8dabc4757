// Memory of a returning visitor end to end (issue 44 point 2), on Postgres (the offline model's in offline-memory, on PGlite): a real LiveKit,
// the agent worker and the real OpenAI plugin against its wire fake. Session 1: the visitor says
// "My name is Zofia and I am allergic to peanuts."; once it ended the job asks the model for the
// facts (structured output) and the control plane keeps them. Session 2 with the same
// visitor_id: welcomed back, and the model is given the facts as quoted data about the visitor
// (a user-role message, never the instructions), so "What do you remember about me?" is answered
// with Zofia and peanuts. Another visitor_id knows neither, nor does the same one after DELETE.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startSession } from '../avatar/support.ts';
import type { ChatRecord } from '../support/fakes/openai.ts';
import type { IdentityBody } from '../support/forms.ts';
import { sharedProviderFakes } from '../support/preload.ts';
import { oneEngine, type TestAccount, type TestService } from '../support/service.ts';
import { createIdentity } from '../support/session-start.ts';
import { inTranscript, transcriptOf, typeTurn } from '../support/typed-turns.ts';
import { eventually, joinAsVisitor } from '../support/visitor.ts';
import { startVisitorService } from '../support/visitor-service.ts';

const fakes = sharedProviderFakes();
const REMEMBERED = 'Remembered about the visitor';
const isMemoryRequest = (chat: ChatRecord) =>
  chat.body.response_format !== undefined && chat.userTexts.some((text) => text.includes('tell about themselves'));

describe.each(oneEngine('postgres'))('a returning visitor on %s', (engine) => {
  let service: TestService;
  let account: TestAccount;
  let identity: IdentityBody;

  beforeAll(async () => {
    // Three slots: the second visit and the stranger's go at once, while the first visit's job
    // may still hold a slot writing its summary.
    ({ service, account } = await startVisitorService({ AGENT_MAX_JOBS: '3' }, { engine }));
    identity = await createIdentity(account, {
      name: 'Ada',
      language: 'en',
      prompt: 'You are Ada, who helps at a bakery.',
    });
  }, 120_000);
  afterAll(() => service?.stop());

  /** A session of `visitorId` where the visitor types `turn`; what the model was asked for the reply, and the transcript. */
  async function visit(visitorId: string, turn: string) {
    const session = await startSession(account, {
      identity_id: identity.identity_id,
      avatar_enabled: false,
      visitor_id: visitorId,
    });
    const text = `${turn} (${session.room_name.slice(-6)})`;
    const visitor = await joinAsVisitor(session, { audioOnly: true });
    try {
      await eventually(() => visitor.agent(), 20_000, 'the agent');
      // After the greeting: a visitor who speaks first is answered instead of greeted.
      await eventually(
        async () => (await transcriptOf(account, session.room_name)).some((t) => t.role === 'agent'),
        20_000,
        'the greeting',
      );
      await typeTurn(visitor, text, () => fakes.openai.chats.some((chat) => chat.userTexts.includes(text)));
      await inTranscript(account, session.room_name, text);
      await eventually(
        async () => (await transcriptOf(account, session.room_name)).filter((t) => t.role === 'agent').length >= 2,
        20_000,
        'the reply',
      );
    } finally {
      await visitor.leave().catch(() => undefined);
    }
    expect((await account.call('POST', `/v1/sessions/${session.room_name}/end`)).status).toBe(200);
    const asked = fakes.openai.chats.find((chat) => !isMemoryRequest(chat) && chat.userTexts.includes(text))!;
    return { session, asked, turns: await transcriptOf(account, session.room_name) };
  }

  const factsOf = async (visitorId: string) => {
    const answer = await account.call('GET', `/v1/visitors/${visitorId}`);
    return answer.status === 404 ? null : ((await answer.json()) as { facts: { text: string }[] }).facts;
  };

  test('remembered across sessions of one visitor, and by nobody else; forgotten after DELETE', async () => {
    fakes.openai.respond((chat) => {
      if (isMemoryRequest(chat))
        return JSON.stringify({ facts: ['Her name is Zofia.', 'She is allergic to peanuts.', 'She loves opera.'] });
      const remembered = chat.messages.some(
        (m) => m.role === 'user' && typeof m.content === 'string' && m.content.includes(REMEMBERED),
      );
      return remembered ? 'You are Zofia, and you are allergic to peanuts.' : 'I do not know anything about you yet.';
    });
    const visitorId = `zofia-${engine}`;
    const first = await visit(visitorId, 'My name is Zofia and I am allergic to peanuts.');
    expect(first.turns.find((t) => t.role === 'agent')!.text).not.toContain('again');
    // Written once the session ended; "She loves opera." rests on nothing she said and is dropped.
    const facts = await eventually(
      async () => ((await factsOf(visitorId))?.length ? factsOf(visitorId) : undefined),
      40_000,
      'the facts',
    );
    expect(facts!.map((f) => f.text)).toEqual(['Her name is Zofia.', 'She is allergic to peanuts.']);
    const memoryAsk = fakes.openai.chats.find(
      (chat) => isMemoryRequest(chat) && chat.userTexts.some((t) => t.includes(first.session.room_name.slice(-6))),
    )!;
    expect(memoryAsk.body.response_format).toMatchObject({ type: 'json_schema', json_schema: { strict: true } });

    // Her next session and a stranger's, at once: neither depends on the other.
    const [second, stranger] = await Promise.all([
      visit(visitorId, 'What do you remember about me?'),
      visit(`someone-else-${engine}`, 'What do you remember about me?'),
    ]);
    expect(second.turns.find((t) => t.role === 'agent')!.text).toContain('Good to see you again, Zofia!');
    const data = second.asked.messages.find(
      (m) => m.role === 'user' && typeof m.content === 'string' && m.content.includes(REMEMBERED),
    );
    expect(data?.content).toContain('«Her name is Zofia.»');
    expect(data?.content).toContain('«She is allergic to peanuts.»');
    // Data, not instructions: the facts are not in the system message, which says how to read them.
    expect(second.asked.system).not.toContain('peanuts');
    expect(second.asked.system).toContain('You have spoken with this visitor before');
    const answer = second.turns.filter((t) => t.role === 'agent').at(-1)!.text;
    expect(answer).toContain('Zofia');
    expect(answer).toContain('peanuts');

    expect(JSON.stringify(stranger.asked.messages)).not.toContain('peanuts');
    expect(stranger.asked.system).not.toContain('spoken with this visitor before');
    expect(stranger.turns.filter((t) => t.role === 'agent').at(-1)!.text).not.toContain('Zofia');

    expect((await account.call('DELETE', `/v1/visitors/${visitorId}`)).status).toBe(204);
    const after = await visit(visitorId, 'What do you remember about me?');
    expect(JSON.stringify(after.asked.messages)).not.toContain('peanuts');
    expect(after.turns.find((t) => t.role === 'agent')!.text).not.toContain('again');
  }, 240_000);
});
