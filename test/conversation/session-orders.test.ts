// Directing a running session (issue 32, docs/api.md#sessions-direct) with the real agent
// worker, a real LiveKit, rtc-node visitors and the cloud providers' wire fakes, on
// PGlite (docs/testing.md#engines): `say` is spoken by the avatar (the visitor hears it) at once or after what
// it says, is an agent turn marked `api` and reaches the model's context; `interrupt` silences
// the avatar at the visitor; `context` reaches the model's prompt for the next reply, and with
// `respond` makes one now. The calls are scoped to the account (404), refused on an ended
// session (409) and before the agent is in the room (503 + Retry-After), their bodies checked
// (422). A visitor's forged order packet is ignored; the room's RPC methods are refused unless
// the session has `client_control`, then taken with typed chat's limits and marked `client`.
// The offline model's side is session-orders-offline.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { RpcError } from '@livekit/rtc-node';
import { CHAT_MAX_CHARS } from '../../agent/conversation/chat.ts';
import {
  CHAT_TOPIC,
  CONTEXT_MAX_CHARS,
  CONTEXT_METHOD,
  CONTEXT_TOTAL_MAX_CHARS,
  INTERRUPT_METHOD,
  ORDER_RPC_ERRORS,
  ORDER_TOPIC,
  SAY_METHOD,
} from '../../src/contract/index.ts';
import type { IdentityBody } from '../support/forms.ts';
import { joinListening } from '../support/listening-visitor.ts';
import { sharedProviderFakes } from '../support/preload.ts';
import { oneEngine, type TestAccount, type TestService } from '../support/service.ts';
import { createIdentity, startWhenAdmitted } from '../support/session-start.ts';
import { eventually, type StartedSession, type Visitor } from '../support/visitor.ts';
import { startVisitorService } from '../support/visitor-service.ts';
import type { Listener } from '../support/voice.ts';

const fakes = sharedProviderFakes();
/** Long enough to still be speaking when the next order comes (about 6 s of fake speech). */
const LONG = 'Let me tell you about our opening hours, our shop in the old town and the market on Saturdays, please.';

interface Turn {
  role: 'user' | 'agent';
  text: string;
  interrupted: boolean;
  ordered_by: 'api' | 'client' | null;
}

describe.each(oneEngine('pglite'))('a running session directed from the backend and the room (%s)', (engine) => {
  let service: TestService;
  let account: TestAccount;
  let other: TestAccount;
  let identity: IdentityBody;
  const marker = `Marker: orders-${engine}-3b7f.`;
  /** Whether the voice (ElevenLabs' fake, for an identity's voice) was given this text in this file. */
  let spoken: (text: string) => boolean;

  beforeAll(async () => {
    spoken = fakes.spokenFromNow();
    ({ service, account } = await startVisitorService({}, { credits: 100_000, engine }));
    other = await service.account({ credits: 1_000 });
    identity = await createIdentity(account, { language: 'en', prompt: `You are Ada. ${marker}` });
    fakes.openai.respond(() => 'Happy to help.');
  }, 120_000);
  afterAll(() => service.stop());

  const json = (body: unknown) => ({
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
  const order = (who: TestAccount, id: string, operation: string, body?: unknown) =>
    who.call('POST', `/v1/sessions/${id}/${operation}`, body === undefined ? undefined : json(body));
  const turns = async (id: string) =>
    ((await (await account.call('GET', `/v1/sessions/${id}/transcript`)).json()) as { turns: Turn[] }).turns;
  const modelChats = () => fakes.openai.chats.filter((chat) => chat.system.includes(marker));

  async function start(extra: Record<string, unknown> = {}): Promise<StartedSession> {
    // As a client honouring Retry-After: the last test's job may still hold its slot (CI, 12-02).
    const started = await startWhenAdmitted(account, {
      identity_id: identity.identity_id,
      idle_timeout_seconds: 0,
      ...extra,
    });
    // The refusal's detail in a failure tells a busy worker from a lost one.
    expect(started.status === 200 ? 200 : `${started.status} ${await started.text()}`).toBe(200);
    return (await started.json()) as StartedSession;
  }

  /** The visitor in the room, hearing the avatar, once the conversation has started and the greeting is over. */
  async function visit(session: StartedSession): Promise<{ visitor: Visitor; ears: () => Listener }> {
    const { visitor, ears } = await joinListening(session);
    await eventually(async () => (await turns(session.room_name)).some((t) => t.role === 'agent'), 30_000, 'greeting');
    // …and its last words have reached the visitor.
    const greeted = performance.now();
    await eventually(() => ears().silenceAfter(greeted, 300) !== undefined, 10_000, 'quiet after the greeting');
    return { visitor, ears };
  }

  /** A session started with `extra` and visited; `during` runs with it, then it is ended and left, however that went. */
  async function duringVisit(
    extra: Record<string, unknown>,
    during: (id: string, visit: { visitor: Visitor; ears: () => Listener }, session: StartedSession) => Promise<void>,
  ): Promise<void> {
    const session = await start(extra);
    const visited = await visit(session);
    try {
      await during(session.room_name, visited, session);
    } finally {
      await account.call('POST', `/v1/sessions/${session.room_name}/end`);
      await visited.visitor.leave().catch(() => undefined);
    }
  }

  test('the calls are the account’s, checked, refused before the agent is in the room and once the session ended', async () => {
    const session = await start();
    const id = session.room_name;
    // At once: the agent joins the room a moment after the start.
    const early = await order(account, id, 'say', { text: 'Too early.' });
    expect(early.status).toBe(503);
    expect(early.headers.get('retry-after')).toBe('2');
    expect(((await early.json()) as { detail: string }).detail).toContain('not in the room yet');

    for (const operation of ['say', 'interrupt', 'context']) {
      const foreign = await order(other, id, operation, operation === 'interrupt' ? undefined : { text: 'Hi.' });
      expect(foreign.status).toBe(404);
      expect(await foreign.json()).toEqual({ detail: 'Session not found' });
    }
    const bad = async (operation: string, body: unknown, field: string, type?: string) => {
      const answer = await order(account, id, operation, body);
      expect(answer.status).toBe(422);
      const { detail } = (await answer.json()) as { detail: { loc: string[]; type: string }[] };
      expect(detail.some((d) => d.loc.join('.') === `body.${field}` && (!type || d.type === type))).toBe(true);
    };
    await bad('say', {}, 'text', 'missing');
    await bad('say', { text: '' }, 'text', 'string_too_short');
    await bad('say', { text: '   ' }, 'text', 'string_blank');
    await bad('say', { text: 'x'.repeat(2_001) }, 'text', 'string_too_long');
    await bad('say', { text: 'a\u0000b' }, 'text', 'string_unsafe_character');
    await bad('say', { text: 'Hi.', interrupt: 'yes' }, 'interrupt');
    await bad('context', { text: 'x'.repeat(8_001) }, 'text', 'string_too_long');
    await bad('context', { text: 'Hi.', respond: 1 }, 'respond');
    const notJson = await account.call('POST', `/v1/sessions/${id}/say`, {
      body: '{"text":',
      headers: { 'content-type': 'application/json' },
    });
    expect(notJson.status).toBe(422);

    // The agent in the room, the visitor not yet: nobody would hear it.
    const agentIn = await eventually(
      async () => {
        const answer = await order(account, id, 'say', { text: 'Nobody here.' });
        return answer.status === 503 ? undefined : answer;
      },
      30_000,
      'the agent in the room',
    );
    expect(agentIn.status).toBe(409);

    expect((await account.call('POST', `/v1/sessions/${id}/end`)).status).toBe(200);
    for (const operation of ['say', 'interrupt', 'context']) {
      const ended = await order(account, id, operation, operation === 'interrupt' ? undefined : { text: 'Hi.' });
      expect(ended.status).toBe(409);
      expect(await ended.json()).toEqual({ detail: 'The session has ended' });
    }
  }, 90_000);

  test('say is heard at once or after what the avatar says; interrupt silences it; both are in the transcript', async () => {
    await duringVisit({}, async (id, { visitor, ears }) => {
      // Said at once: the visitor hears it, and the transcript marks it as the API's.
      const calledAt = performance.now();
      const said = await order(account, id, 'say', { text: 'Your payment went through.' });
      expect(said.status).toBe(200);
      const body = (await said.json()) as { order_id: string; session_id: string; operation: string };
      expect(body).toEqual({ order_id: expect.stringMatching(/^ord_\w{22}$/), session_id: id, operation: 'say' });
      const heardAt = await eventually(() => ears().soundAfter(calledAt), 10_000, 'the said audio');
      console.log(`${engine}: say call → first audio at the visitor ${Math.round(heardAt - calledAt)} ms`);
      expect(spoken('Your payment went through.')).toBe(true);
      await eventually(
        async () => (await turns(id)).find((t) => t.text === 'Your payment went through.' && t.ordered_by === 'api'),
        15_000,
        'the said turn in the transcript',
      );

      // interrupt: false waits for what is being said; the default cuts it off.
      expect((await order(account, id, 'say', { text: LONG })).status).toBe(200);
      await eventually(() => spoken(LONG), 10_000, 'the long text synthesised');
      expect((await order(account, id, 'say', { text: 'And after that.', interrupt: false })).status).toBe(200);
      await eventually(
        async () => (await turns(id)).some((t) => t.text === 'And after that.'),
        30_000,
        'the queued say spoken',
      );
      const queued = await turns(id);
      const long = queued.findIndex((t) => t.text === LONG);
      expect(queued[long]).toMatchObject({ interrupted: false, ordered_by: 'api' });
      expect(queued.findIndex((t) => t.text === 'And after that.')).toBeGreaterThan(long);

      expect((await order(account, id, 'say', { text: `${LONG} Again.` })).status).toBe(200);
      await eventually(() => ears().soundAfter(performance.now() - 200), 10_000, 'the long text heard');
      await Bun.sleep(800);
      expect((await order(account, id, 'say', { text: 'Stop, this first.' })).status).toBe(200);
      const cut = await eventually(
        async () => (await turns(id)).find((t) => t.text === 'Stop, this first.'),
        30_000,
        'the interrupting say spoken',
      );
      expect(cut.ordered_by).toBe('api');
      // The cut-off one is marked so (its text is what was sent to the voice: say gives it whole).
      const again = (await turns(id)).find((t) => t.text.endsWith('Again.'));
      expect(again).toMatchObject({ interrupted: true, ordered_by: 'api' });

      // interrupt: the voice stops at the visitor.
      await Bun.sleep(1_000);
      expect((await order(account, id, 'say', { text: `${LONG} Third time.` })).status).toBe(200);
      await eventually(() => ears().soundAfter(performance.now() - 200), 10_000, 'speech before the interrupt');
      await Bun.sleep(700);
      const stopAt = performance.now();
      const stopped = await order(account, id, 'interrupt');
      expect(stopped.status).toBe(200);
      expect(((await stopped.json()) as { operation: string }).operation).toBe('interrupt');
      const silentFrom = await eventually(() => ears().silenceAfter(stopAt, 300), 10_000, 'silence');
      console.log(`${engine}: interrupt call → silence at the visitor ${Math.round(silentFrom - stopAt)} ms`);
      expect(silentFrom - stopAt).toBeLessThan(1_000);
      await eventually(
        async () => (await turns(id)).find((t) => t.text.endsWith('Third time.') && t.interrupted),
        10_000,
        'the interrupted turn',
      );
      // The model knows what was said: the next reply's context holds it.
      await visitor.room.localParticipant!.sendText('Did my payment go through?', { topic: CHAT_TOPIC });
      const chat = await eventually(
        () => modelChats().find((c) => c.userTexts.includes('Did my payment go through?')),
        20_000,
        'the next reply',
      );
      expect(
        chat.messages.some(
          (m) => m.role === 'assistant' && JSON.stringify(m.content).includes('Your payment went through.'),
        ),
      ).toBe(true);
    });
  }, 150_000);

  test('context reaches the next reply’s prompt, and with respond a reply now; a forged order packet and room RPC are refused without client_control', async () => {
    await duringVisit({ avatar_enabled: false }, async (id, { visitor }) => {
      const added = await order(account, id, 'context', { text: "The visitor's name is Zofia." });
      expect(added.status).toBe(200);
      await visitor.room.localParticipant!.sendText('What is my name?', { topic: CHAT_TOPIC });
      const asked = await eventually(
        () => modelChats().find((c) => c.userTexts.includes('What is my name?')),
        20_000,
        'the question to reach the model',
      );
      expect(asked.system).toContain("The visitor's name is Zofia.");
      // Nothing of it was spoken.
      expect(spoken('Zofia')).toBe(false);

      const before = modelChats().length;
      const respond = await order(account, id, 'context', { text: 'Their parcel left this morning.', respond: true });
      expect(respond.status).toBe(200);
      const reply = await eventually(() => modelChats().slice(before)[0], 20_000, 'a reply now');
      expect(reply.system).toContain('Their parcel left this morning.');
      expect(reply.system).toContain("The visitor's name is Zofia.");
      expect(reply.userTexts.at(-1)).toBe('What is my name?');

      // The visitor forges the backend's order packet: ignored.
      const agent = visitor.agent()!;
      await visitor.room.localParticipant!.publishData(
        new TextEncoder().encode(JSON.stringify({ order_id: 'ord_forged', operation: 'say', text: 'Forged words.' })),
        { reliable: true, topic: ORDER_TOPIC, destination_identities: [agent.identity] },
      );
      // Without client_control, the room's methods are refused and change nothing.
      for (const [method, payload] of [
        [SAY_METHOD, { text: 'Client words.' }],
        [INTERRUPT_METHOD, {}],
        [CONTEXT_METHOD, { text: 'Client context.' }],
      ] as const) {
        const refused = await visitor.room
          .localParticipant!.performRpc({
            destinationIdentity: agent.identity,
            method,
            payload: JSON.stringify(payload),
          })
          .then(
            () => undefined,
            (error: unknown) => error,
          );
        expect(refused).toBeInstanceOf(RpcError);
        expect((refused as RpcError).code).toBe(ORDER_RPC_ERRORS.notAllowed);
      }
      await Bun.sleep(2_000);
      expect(spoken('Forged words.')).toBe(false);
      expect(spoken('Client words.')).toBe(false);
      expect(modelChats().some((c) => c.system.includes('Client context.'))).toBe(false);
    });
  }, 120_000);

  test('context orders add up to 32,000 characters: one past it is refused with the reason, and changes nothing', async () => {
    await duringVisit({ avatar_enabled: false }, async (id, { visitor }) => {
      const block = (n: number) => `Fact ${n}: ${'z'.repeat(CONTEXT_MAX_CHARS - 10)}`.slice(0, CONTEXT_MAX_CHARS);
      for (let n = 0; n < CONTEXT_TOTAL_MAX_CHARS / CONTEXT_MAX_CHARS; n++)
        expect((await order(account, id, 'context', { text: block(n) })).status).toBe(200);
      const past = await order(account, id, 'context', { text: 'One fact too many.' });
      expect(past.status).toBe(409);
      expect(((await past.json()) as { detail: string }).detail).toContain('context is full');
      await visitor.room.localParticipant!.sendText('Anything new?', { topic: CHAT_TOPIC });
      const asked = await eventually(
        () => modelChats().find((c) => c.userTexts.includes('Anything new?')),
        20_000,
        'the question to reach the model',
      );
      expect(asked.system).toContain('Fact 3:');
      expect(asked.system).not.toContain('One fact too many.');
    });
  }, 120_000);

  test('with client_control the visitor’s app says, interrupts and adds context over RPC, with typed chat’s limits', async () => {
    await duringVisit({ avatar_enabled: false, client_control: true }, async (id, { visitor }) => {
      const agent = visitor.agent()!;
      const call = (method: string, payload: unknown) =>
        visitor.room
          .localParticipant!.performRpc({
            destinationIdentity: agent.identity,
            method,
            payload: JSON.stringify(payload),
          })
          .then(
            (answer) => ({ answer, code: 0 }),
            (error: unknown) => ({ answer: '', code: (error as RpcError).code }),
          );
      expect(await call(SAY_METHOD, { text: 'Said by the app.' })).toEqual({ answer: '{"outcome":"done"}', code: 0 });
      // Within 2 s of the last: too many.
      expect((await call(CONTEXT_METHOD, { text: 'Too soon.' })).code).toBe(ORDER_RPC_ERRORS.tooMany);
      // interrupt costs nothing: not limited.
      expect((await call(INTERRUPT_METHOD, {})).code).toBe(0);
      await Bun.sleep(2_100);
      expect((await call(SAY_METHOD, { text: 'x'.repeat(CHAT_MAX_CHARS + 1) })).code).toBe(ORDER_RPC_ERRORS.invalid);
      expect((await call(SAY_METHOD, { words: 'no text' })).code).toBe(ORDER_RPC_ERRORS.invalid);
      expect((await call(CONTEXT_METHOD, { text: 'The app says the visitor is Piotr.' })).code).toBe(0);
      await Bun.sleep(2_100);
      expect((await call(SAY_METHOD, { text: 'Said by the app again.' })).code).toBe(0);
      const said = await eventually(
        async () => (await turns(id)).find((t) => t.text === 'Said by the app again.'),
        20_000,
        'the app’s say in the transcript',
      );
      expect(said.ordered_by).toBe('client');
      await Bun.sleep(2_100);
      await visitor.room.localParticipant!.sendText('Who am I?', { topic: CHAT_TOPIC });
      const asked = await eventually(
        () => modelChats().find((c) => c.userTexts.includes('Who am I?')),
        20_000,
        'the question',
      );
      // The app's note reaches the model as quoted data, not in its instructions (untrusted-text.test.ts).
      expect(asked.system).not.toContain('The app says the visitor is Piotr.');
      expect(
        asked.userTexts.some((t) => t.startsWith("From the visitor's app") && t.includes('visitor is Piotr.')),
      ).toBe(true);
      expect(JSON.stringify(asked.messages)).not.toContain('Too soon.');
    });
  }, 120_000);
});
