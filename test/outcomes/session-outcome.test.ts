// A conversation's outcome end to end (issue 44 point 1), on PGlite (the offline model's in offline-outcome, on Postgres): a real LiveKit, the
// agent worker and the real OpenAI plugin against its wire fake. The visitor types their name,
// email, that they want a demo and the day; once the session ends the job asks the model for the
// identity's outcome in OpenAI's structured output (strict, the written shape) and the outcome
// shows on GET /v1/sessions/{id} and as `session.outcome_ready`. A conversation that mentions
// none of the fields gives all nulls even when the model invents values.
import { beforeAll, describe, expect, test } from 'bun:test';
import { writtenOutcomeSchema } from '../../src/contract/index.ts';
import { LEAD_OUTCOME_SCHEMA } from '../../src/outcomes/contract.ts';
import { startSession } from '../avatar/support.ts';
import type { ChatRecord } from '../support/fakes/openai.ts';
import type { IdentityBody } from '../support/forms.ts';
import { sharedProviderFakes } from '../support/preload.ts';
import { oneEngine } from '../support/service.ts';
import { createIdentity } from '../support/session-start.ts';
import { suiteVisitorService } from '../support/suite-agent-service.ts';
import { withWebhooks } from '../support/suite-service.ts';
import { inTranscript, typeTurn } from '../support/typed-turns.ts';
import { eventually, joinAsVisitor, type StartedSession } from '../support/visitor.ts';
import { LOOPBACK_WEBHOOKS_ENV } from '../support/webhook-subscription.ts';

const fakes = sharedProviderFakes();
const REPLY = 'Lovely, noted.';
const isOutcomeRequest = (chat: ChatRecord) => chat.body.response_format !== undefined;

describe.each(oneEngine('pglite'))('session outcomes on %s', (engine) => {
  const suite = withWebhooks(suiteVisitorService(LOOPBACK_WEBHOOKS_ENV, { engine }), ['session.outcome_ready']);
  let identity: IdentityBody;

  beforeAll(async () => {
    identity = await createIdentity(suite.account, {
      name: 'Ada',
      language: 'en',
      prompt: 'You are Ada, who books product demos.',
      outcome_schema: JSON.stringify(LEAD_OUTCOME_SCHEMA),
    });
  }, 120_000);

  const read = async (id: string) =>
    (await (await suite.account.call('GET', `/v1/sessions/${id}`)).json()) as {
      outcome: Record<string, unknown> | null;
      outcome_status: string;
      outcome_detail: string | null;
    };

  /** A conversation of typed turns (each answered), then its end; the outcome once settled, and what the model was asked. */
  async function conversation(turns: string[], answer: Record<string, unknown>) {
    const session: StartedSession = await startSession(suite.account, {
      identity_id: identity.identity_id,
      avatar_enabled: false,
    });
    const tag = session.room_name.slice(-6);
    fakes.openai.respond((chat) =>
      isOutcomeRequest(chat) && chat.userTexts.some((text) => text.includes(tag)) ? JSON.stringify(answer) : REPLY,
    );
    const visitor = await joinAsVisitor(session, { audioOnly: true });
    try {
      await eventually(() => visitor.agent(), 20_000, 'the agent');
      for (const [i, turn] of turns.entries()) {
        const text = i === 0 ? `${turn} (${tag})` : turn;
        await typeTurn(visitor, text, () => fakes.openai.chats.some((chat) => chat.userTexts.includes(text)));
        // In the history the outcome is written from only once its answer is scheduled.
        await inTranscript(suite.account, session.room_name, text);
      }
    } finally {
      await visitor.leave().catch(() => undefined);
    }
    expect((await suite.account.call('POST', `/v1/sessions/${session.room_name}/end`)).status).toBe(200);
    const body = await eventually(
      async () => {
        const current = await read(session.room_name);
        return current.outcome_status === 'ready' || current.outcome_status === 'failed' ? current : undefined;
      },
      40_000,
      'the outcome',
      async () => ({
        session: await read(session.room_name),
        asked_ms_ago: fakes.openai.chats
          .filter((chat) => isOutcomeRequest(chat) && chat.userTexts.some((t) => t.includes(tag)))
          .map((chat) => Date.now() - chat.at),
      }),
    );
    const asked = fakes.openai.chats.find(
      (chat) => isOutcomeRequest(chat) && chat.userTexts.some((t) => t.includes(tag)),
    );
    return { session, body, asked: asked! };
  }

  test('name, email, a demo and its day: the outcome holds exactly those, on the session and as a webhook', async () => {
    const outcome = { name: 'Zofia Nowak', email: 'zofia@example.com', wants_demo: true, demo_day: 'tuesday' };
    const { session, body, asked } = await conversation(
      ["Hi, I'm Zofia Nowak, my email is zofia@example.com.", "I'd like a demo of the product. Tuesday suits me."],
      outcome,
    );
    expect(body).toEqual({ ...body, outcome, outcome_status: 'ready', outcome_detail: null });
    // Asked in structured output: strict, the written shape of the identity's schema.
    expect(asked.body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'answer', strict: true, schema: writtenOutcomeSchema(LEAD_OUTCOME_SCHEMA) },
    });
    const question = asked.userTexts.at(-1)!;
    expect(question).toContain("Visitor: I'd like a demo of the product. Tuesday suits me.");
    expect(question).toContain("- email: The visitor's email address");
    const [event] = await suite.receiver.waitFor('session.outcome_ready', () => {
      const events = suite.receiver
        .verified('/hooks', suite.secret)
        .filter((e) => e.type === 'session.outcome_ready' && e.data.session_id === session.room_name);
      return events.length ? events : undefined;
    });
    expect(event!.data).toEqual({ session_id: session.room_name, identity_id: identity.identity_id, outcome });
  }, 120_000);

  test('a conversation about none of the fields: all null, though the model invented every one', async () => {
    const { body } = await conversation(['What time do you open on Sundays?'], {
      name: 'John Smith',
      email: 'john@example.com',
      wants_demo: true,
      demo_day: 'friday',
    });
    expect(body).toMatchObject({
      outcome: { name: null, email: null, wants_demo: null, demo_day: null },
      outcome_status: 'ready',
    });
  }, 120_000);
});
