// Orders with the offline models (docs/api.md#sessions-direct): an agent-only process without
// any cloud key, as an operator runs one. A `context` order mid-conversation reaches the small
// model's prompt (it builds its own from the chat context and drops older turns: the order's
// context is in the instructions), so the visitor's typed "What is my name?" is answered with
// the name only the order gave; a `say` is spoken by the offline voice and is an agent turn
// marked `api`. The wire fakes' side is session-orders.test.ts.
//
// The start's `context` (docs/api.md#sessions-context) is here too, on the same service: the
// visitor types the question (typed chat is answered like speech), so the model is what is
// tested, not Whisper. The wire fakes' side is session-direction.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type RemoteTrack, TrackKind } from '@livekit/rtc-node';
import type { IdentityBody } from '../support/forms.ts';
import { type OfflineAgentService, startOfflineAgentService } from '../support/offline-agent.ts';
import type { TestAccount } from '../support/service.ts';
import { createIdentity, postSessionStart } from '../support/session-start.ts';
import { typeUntilTaken } from '../support/typed-turns.ts';
import { eventually, joinAsVisitor, type StartedSession, type Visitor } from '../support/visitor.ts';
import { Listener } from '../support/voice.ts';

interface Turn {
  role: 'user' | 'agent';
  text: string;
  ordered_by: string | null;
}

/**
 * Types "What is my name?" until it is in the transcript: typed messages go at most one every
 * 2 s, and one sent before the conversation listens is not taken.
 */
async function typeNameQuestion(visitor: Visitor, turns: () => Promise<Turn[]>): Promise<void> {
  await typeUntilTaken(
    visitor.room.localParticipant!,
    'What is my name?',
    async () => (await turns()).some((t) => t.role === 'user'),
    'the question to reach the conversation',
    90_000,
  );
}

// One service for both describes: an agent-only process and its warm job processes take
// seconds to start, and both ask the same identity.
let offline: OfflineAgentService;
let account: TestAccount;
let identity: IdentityBody;

beforeAll(async () => {
  offline = await startOfflineAgentService('direction-and-orders-offline');
  ({ account } = offline);
  identity = await createIdentity(account, { language: 'en', prompt: 'You are Ada, a friendly shop assistant.' });
}, 120_000);

// The last session's job may still write its summary: nothing here reads it.
afterAll(() => offline?.stop({ jobs: 'kill' }));

describe('orders with the offline models', () => {
  test(
    'a context order informs the next reply, and say is spoken and marked api',
    () =>
      offline.explained(async () => {
        const started = await postSessionStart(account, {
          identity_id: identity.identity_id,
          avatar_enabled: false,
          idle_timeout_seconds: 0,
        });
        expect(started.status).toBe(200);
        const session = (await started.json()) as StartedSession;
        const id = session.room_name;
        let ears: Listener | undefined;
        const visitor = await joinAsVisitor(session, {
          onTrack: (track: RemoteTrack) => {
            if (track.kind === TrackKind.KIND_AUDIO) ears = new Listener(track);
          },
        });
        const turns = async () =>
          ((await (await account.call('GET', `/v1/sessions/${id}/transcript`)).json()) as { turns: Turn[] }).turns;
        const post = (operation: string, body: unknown) =>
          account.call('POST', `/v1/sessions/${id}/${operation}`, {
            body: JSON.stringify(body),
            headers: { 'content-type': 'application/json' },
          });
        try {
          await eventually(() => visitor.agent(), 60_000, 'the agent');
          // The conversation has started once its greeting is in the transcript.
          await eventually(async () => (await turns()).some((t) => t.role === 'agent'), 90_000, 'the greeting');

          const added = await eventually(
            async () => {
              const answer = await post('context', { text: "The visitor's name is Zofia." });
              return answer.status === 200 ? answer : undefined;
            },
            30_000,
            'the context order taken',
          );
          expect(added.status).toBe(200);
          await typeNameQuestion(visitor, turns);
          const replied = await eventually(
            async () => {
              const all = await turns();
              const asked = all.findIndex((t) => t.role === 'user');
              return all.slice(asked).find((t) => t.role === 'agent');
            },
            120_000,
            'the offline reply',
          );
          console.log(`offline reply after the context order: ${JSON.stringify(replied.text)}`);
          expect(replied.text).toContain('Zofia');

          // respond: a reply now, with the new fact in mind (the 0.5B model's wording varies; it tells the parcel).
          const before = (await turns()).length;
          expect(
            (await post('context', { text: 'Her parcel left the warehouse this morning.', respond: true })).status,
          ).toBe(200);
          const responded = await eventually(
            async () => (await turns()).slice(before).find((t) => t.role === 'agent'),
            120_000,
            'a reply to the context',
          );
          console.log(`offline reply to a context order with respond: ${JSON.stringify(responded.text)}`);
          expect(responded.ordered_by).toBeNull();
          expect(responded.text.toLowerCase()).toContain('parcel');

          // Quiet first: the reply's last words are not the said audio.
          const replyHeard = performance.now();
          await eventually(() => ears?.silenceAfter(replyHeard, 300) !== undefined, 30_000, 'quiet after the reply');
          const calledAt = performance.now();
          const said = await post('say', { text: 'Your order has shipped, Zofia.' });
          expect(said.status).toBe(200);
          const heardAt = await eventually(() => ears?.soundAfter(calledAt), 20_000, 'the said audio');
          console.log(`offline: say call → first audio at the visitor ${Math.round(heardAt - calledAt)} ms`);
          const turn = await eventually(
            async () => (await turns()).find((t) => t.ordered_by === 'api'),
            30_000,
            'the said turn',
          );
          expect(turn).toMatchObject({ role: 'agent', text: 'Your order has shipped, Zofia.' });
        } finally {
          await account.call('POST', `/v1/sessions/${id}/end`);
          await visitor.leave().catch(() => undefined);
        }
      }),
    400_000,
  );
});

describe("the start's context with the offline model", () => {
  /** Asks by typed chat (again, 2 s apart, until the conversation took it) and returns the turns. */
  async function askName(): Promise<Turn[]> {
    const started = await postSessionStart(account, {
      identity_id: identity.identity_id,
      avatar_enabled: false,
      context: "The visitor's name is Zofia.",
      idle_timeout_seconds: 0,
    });
    expect(started.status).toBe(200);
    const session = (await started.json()) as StartedSession;
    const visitor = await joinAsVisitor(session, { audioOnly: true });
    const turns = async () =>
      (
        (await (await account.call('GET', `/v1/sessions/${session.room_name}/transcript`)).json()) as {
          turns: Turn[];
        }
      ).turns;
    try {
      await eventually(() => visitor.agent(), 60_000, 'the agent');
      await typeNameQuestion(visitor, turns);
      return await eventually(
        async () => {
          const all = await turns();
          const asked = all.findIndex((t) => t.role === 'user');
          return all.slice(asked).some((t) => t.role === 'agent') ? all : undefined;
        },
        // A loaded 2-core machine took 10 s for the first offline reply.
        120_000,
        'the offline reply',
      );
    } finally {
      await account.call('POST', `/v1/sessions/${session.room_name}/end`);
      await visitor.leave().catch(() => undefined);
    }
  }

  test('the visitor asks their name and the reply says it, from the first reply', async () => {
    const turns = await offline.explained(askName);
    console.log(`offline, with a context: ${JSON.stringify(turns)}`);
    const asked = turns.findIndex((t) => t.role === 'user');
    expect(turns[asked]!.text).toBe('What is my name?');
    // The 0.5B model mirrors the question's pronoun ("My name is Zofia."); without the context it names itself, Ada.
    expect(turns.slice(asked).find((t) => t.role === 'agent')!.text).toContain('Zofia');
  }, 300_000);
});
