// Memory of a returning visitor on the offline models (issue 44 point 2; the wire-fake suite runs
// on both engines): with no cloud key, the job writes the facts with the offline reply model
// under a grammar made from the answer's schema, keeps those resting on the visitor's words, and
// the next session of the same visitor_id answers "What do you remember about me?" from them. A
// session of another visitor knows neither fact. Forgetting (DELETE) is shown with a real session
// in visitor-memory (wire fake): a fourth offline session here waited past 150 s for a slot of
// this 2-slot worker in two full runs (the earlier jobs still writing). The visitor types.
// The worker has three slots: in run 82 the first visit's job, its facts written, still held a
// slot (its summary) past 150 s while the next two visits came at once.
import { afterAll, beforeAll, expect, test } from 'bun:test';
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
  offline = await startOfflineAgentService('offline-memory', { maxJobs: 3 });
  ({ account } = offline);
  identity = await createIdentity(account, {
    name: 'Ada',
    language: 'en',
    prompt: 'You are Ada, who helps at a bakery. Answer in one short sentence.',
  });
}, 120_000);

// The last two visits' jobs still write their summary and memory: nothing here reads them.
afterAll(() => offline?.stop({ jobs: 'kill' }));

const jobLines = (room: string) =>
  offline
    .agentOutput()
    .split('\n')
    .filter((line) => line.includes(room))
    .join('\n');

/** A session of `visitorId` where the visitor types `turn` and waits for the answer; the agent's turns. */
async function visit(visitorId: string, turn: string): Promise<string[]> {
  const started = await postSessionStart(account, {
    identity_id: identity.identity_id,
    avatar_enabled: false,
    visitor_id: visitorId,
  });
  expect(started.status).toBe(200);
  const session = (await started.json()) as StartedSession;
  const startedAt = performance.now();
  const seconds = () => ((performance.now() - startedAt) / 1000).toFixed(1);
  const visitor = await joinAsVisitor(session, { audioOnly: true });
  const transcript = () => transcriptOf(account, session.room_name);
  try {
    // A slot may still be held by an earlier visit's job writing its summary and memory (a job
    // gets 70 s to leave; AGENT_MAX_JOBS is 3 here): the next agent comes once one is free.
    await eventually(() => visitor.agent(), 150_000, 'the agent');
    console.log(`${visitorId}'s visit: the agent after ${seconds()} s`);
    await eventually(async () => (await transcript()).some((t) => t.role === 'agent'), 60_000, 'the greeting');
    await typeTurn(visitor, turn, async () => (await transcript()).some((t) => t.role === 'user'), 90_000);
    await eventually(
      async () => (await transcript()).filter((t) => t.role === 'agent').length >= 2,
      60_000,
      'the answer',
    ).catch((error: unknown) => {
      console.log(jobLines(session.room_name));
      throw error;
    });
    console.log(`${visitorId}'s visit: the answer after ${seconds()} s`);
  } finally {
    await visitor.leave().catch(() => undefined);
    await account.call('POST', `/v1/sessions/${session.room_name}/end`);
  }
  return (await transcript()).filter((t) => t.role === 'agent').map((t) => t.text);
}

const factsOf = async (visitorId: string) =>
  ((await (await account.call('GET', `/v1/visitors/${visitorId}`)).json()) as { facts: { text: string }[] }).facts;

test('Zofia and her peanuts, remembered by the offline model in her next session only', async () => {
  await visit('zofia', 'My name is Zofia and I am allergic to peanuts.');
  const facts = await eventually(
    async () => {
      const written = await factsOf('zofia');
      return written.length > 0 ? written : undefined;
    },
    90_000,
    'the facts',
  );
  const remembered = facts.map((f) => f.text).join(' ');
  expect(remembered).toContain('Zofia');
  expect(remembered.toLowerCase()).toContain('peanut');

  // Her next session and a stranger's, at once (one slot each): the facts are written, and
  // neither visit depends on the other.
  const [[greeting, answer], [, strangers]] = await Promise.all([
    visit('zofia', 'What do you remember about me?'),
    visit('someone-else', 'What do you remember about me?'),
  ]);
  // The name by rule (statedName), whatever the model wrote.
  expect(greeting).toContain('Good to see you again, Zofia!');
  expect(answer).toContain('Zofia');
  expect(answer!.toLowerCase()).toContain('peanut');

  expect(strangers).not.toContain('Zofia');
  expect(strangers!.toLowerCase()).not.toContain('peanut');
}, 500_000);
