// A conversation's outcome on the offline models (issue 44 point 1), on Postgres (the wire-fake
// suite runs on both engines): with no cloud key, the job fills the identity's outcome schema
// with the offline reply model sampling under a grammar made from the schema, and grounds each
// value in what was said. The visitor types (Whisper is not the point here).
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { LEAD_OUTCOME_SCHEMA } from '../../src/outcomes/contract.ts';
import type { IdentityBody } from '../support/forms.ts';
import { type OfflineAgentService, startOfflineAgentService } from '../support/offline-agent.ts';
import type { TestAccount } from '../support/service.ts';
import { createIdentity, postSessionStart } from '../support/session-start.ts';
import { transcriptOf, typeTurn } from '../support/typed-turns.ts';
import { eventually, joinAsVisitor, type StartedSession } from '../support/visitor.ts';

let offline: OfflineAgentService;
let account: TestAccount;
let identity: IdentityBody;

beforeAll(async () => {
  offline = await startOfflineAgentService('offline-outcome', { engine: 'postgres' });
  ({ account } = offline);
  identity = await createIdentity(account, {
    name: 'Ada',
    language: 'en',
    prompt: 'You are Ada, who books product demos. Answer in one short sentence.',
    outcome_schema: JSON.stringify(LEAD_OUTCOME_SCHEMA),
  });
}, 120_000);

afterAll(() => offline?.stop());

/** Types each turn (waiting for it in the transcript), ends the session, and reads its outcome. */
async function outcomeOf(turns: string[]) {
  const started = await postSessionStart(account, { identity_id: identity.identity_id, avatar_enabled: false });
  expect(started.status).toBe(200);
  const session = (await started.json()) as StartedSession;
  const visitor = await joinAsVisitor(session, { audioOnly: true });
  try {
    await eventually(() => visitor.agent(), 60_000, 'the agent');
    for (const turn of turns) {
      const taken = async () =>
        (await transcriptOf(account, session.room_name)).some((t) => t.role === 'user' && t.text === turn);
      await typeTurn(visitor, turn, taken, 90_000);
    }
  } finally {
    await visitor.leave().catch(() => undefined);
    await account.call('POST', `/v1/sessions/${session.room_name}/end`);
  }
  return eventually(
    async () => {
      const current = (await (await account.call('GET', `/v1/sessions/${session.room_name}`)).json()) as {
        outcome: Record<string, unknown> | null;
        outcome_status: string;
        outcome_detail: string | null;
      };
      return current.outcome_status === 'ready' || current.outcome_status === 'failed' ? current : undefined;
    },
    90_000,
    'the outcome',
  ).catch((error: unknown) => {
    console.log(
      offline
        .agentOutput()
        .split('\n')
        .filter((line) => line.includes(session.room_name))
        .join('\n'),
    );
    throw error;
  });
}

test('name, email, a demo and Tuesday: exactly those, from the offline model', async () => {
  const body = await outcomeOf([
    "Hi! I'm Zofia Nowak and my email is zofia@example.com.",
    "I'd like a demo of the product. Tuesday works best for me.",
  ]);
  expect(body).toMatchObject({
    outcome_status: 'ready',
    outcome: { name: 'Zofia Nowak', email: 'zofia@example.com', wants_demo: true, demo_day: 'tuesday' },
  });
}, 300_000);

test('a conversation about none of the fields gives all nulls, not invented values', async () => {
  const body = await outcomeOf(['What time do you open on Sundays?']);
  expect(body).toMatchObject({
    outcome_status: 'ready',
    outcome: { name: null, email: null, wants_demo: null, demo_day: null },
  });
}, 300_000);
