// The start's `context` with the offline reply model (docs/api.md#sessions-context): an
// agent-only process without any cloud key, as an operator runs one, and a fact only the
// context gives. The visitor types the question (typed chat is answered like speech), so
// the model is what is tested, not Whisper. The wire fakes' side is session-direction.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { CHAT_TOPIC } from '../../src/contract/index.ts';
import { type IdentityBody, identityForm } from '../support/forms.ts';
import { type OfflineAgentService, startOfflineAgentService } from '../support/offline-agent.ts';
import type { TestAccount } from '../support/service.ts';
import { eventually, joinAsVisitor, type StartedSession } from '../support/visitor.ts';

interface Turn {
  role: 'user' | 'agent';
  text: string;
}

describe("the start's context with the offline model", () => {
  let offline: OfflineAgentService;
  let account: TestAccount;
  let identity: IdentityBody;

  beforeAll(async () => {
    offline = await startOfflineAgentService('direction-offline');
    ({ account } = offline);
    identity = (await (
      await account.call('POST', '/v1/identities', {
        body: await identityForm({ language: 'en', prompt: 'You are Ada, a friendly shop assistant.' }),
      })
    ).json()) as IdentityBody;
  }, 120_000);

  afterAll(() => offline?.stop());

  /** Asks by typed chat (again, 2 s apart, until the conversation took it) and returns the turns. */
  async function askName(): Promise<Turn[]> {
    const started = await account.call('POST', '/v1/sessions/start', {
      body: JSON.stringify({
        identity_id: identity.identity_id,
        avatar_enabled: false,
        context: "The visitor's name is Zofia.",
        idle_timeout_seconds: 0,
      }),
      headers: { 'content-type': 'application/json' },
    });
    expect(started.status).toBe(200);
    const session = (await started.json()) as StartedSession;
    const visitor = await joinAsVisitor(session);
    const turns = async () =>
      (
        (await (await account.call('GET', `/v1/sessions/${session.room_name}/transcript`)).json()) as {
          turns: Turn[];
        }
      ).turns;
    try {
      await eventually(() => visitor.agent(), 60_000, 'the agent');
      await eventually(
        async () => {
          await visitor.room.localParticipant!.sendText('What is my name?', { topic: CHAT_TOPIC });
          await Bun.sleep(2_100);
          return (await turns()).some((t) => t.role === 'user');
        },
        90_000,
        'the question to reach the conversation',
      );
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
