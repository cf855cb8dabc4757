// bench/outcomes, end to end (issue 44 point 1's "time from the end to outcome_ready"): real
// sessions on the offline models (the service on PGlite, its agent worker in its own process,
// a real LiveKit), one per conversation of conversations.json: the visitor (rtc-node) types the
// conversation's turns, each after the agent's answer, leaves, and the backend ends the session;
// then the time from the end call to the `session.outcome_ready` webhook, and the outcome it
// carries against the one expected. One session at a time, voice only.
//   npm run bench -- bench/outcomes/end-to-ready.ts [--sessions 6]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { LEAD_OUTCOME_SCHEMA } from '../../src/outcomes/contract.ts';
import { type IdentityBody, identityForm } from '../../test/support/forms.ts';
import { startOfflineAgentService } from '../../test/support/offline-agent.ts';
import { transcriptOf, typeTurn } from '../../test/support/typed-turns.ts';
import { eventually, joinAsVisitor, type StartedSession } from '../../test/support/visitor.ts';
import { addWebhook, WebhookReceiver } from '../../test/support/webhooks.ts';

const { values: args } = parseArgs({ options: { sessions: { type: 'string', default: '6' } } });
const { conversations } = JSON.parse(readFileSync(new URL('./conversations.json', import.meta.url), 'utf8')) as {
  conversations: { language: string; turns: ['user' | 'assistant', string][]; expected: Record<string, unknown> }[];
};

const offline = await startOfflineAgentService('bench-outcome-ready', {
  env: { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_POLL_MS: '200' },
});
const { account } = offline;
const receiver = new WebhookReceiver();
const secret = (await addWebhook(account, { url: receiver.url('/hooks'), events: ['session.outcome_ready'] })).secret!;
const json = (body: unknown) => ({ body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
const identities = new Map<string, IdentityBody>();
const identityFor = async (language: string) => {
  if (!identities.has(language)) {
    const form = await identityForm({
      name: 'Ada',
      language,
      prompt: 'You are Ada, who books product demos. Answer in one short sentence.',
      outcome_schema: JSON.stringify(LEAD_OUTCOME_SCHEMA),
    });
    identities.set(
      language,
      (await (await account.call('POST', '/v1/identities', { body: form })).json()) as IdentityBody,
    );
  }
  return identities.get(language)!;
};

const times: number[] = [];
let right = 0;
let fields = 0;
for (const conversation of conversations.slice(0, Number(args.sessions))) {
  const identity = await identityFor(conversation.language);
  const started = await account.call(
    'POST',
    '/v1/sessions/start',
    json({ identity_id: identity.identity_id, avatar_enabled: false }),
  );
  const session = (await started.json()) as StartedSession;
  const visitor = await joinAsVisitor(session, { audioOnly: true });
  const transcript = () => transcriptOf(account, session.room_name);
  const count = async (role: string) => (await transcript()).filter((turn) => turn.role === role).length;
  await eventually(async () => (await count('agent')) > 0, 90_000, 'the greeting');
  for (const [role, text] of conversation.turns) {
    if (role !== 'user') continue;
    const [users, agents] = [await count('user'), await count('agent')];
    await typeTurn(visitor, text, async () => (await count('user')) > users, 90_000);
    await eventually(async () => (await count('agent')) > agents, 90_000, 'the answer');
  }
  await visitor.leave();
  const endedAt = Date.now();
  await account.call('POST', `/v1/sessions/${session.room_name}/end`);
  const event = await receiver.waitFor(
    'session.outcome_ready',
    () => receiver.verified('/hooks', secret).find((e) => e.data.session_id === session.room_name),
    120_000,
  );
  const ms = receiver.received.find((r) => r.headers['webhook-id'] === event.id)!.at - endedAt;
  times.push(ms);
  const outcome = (event.data.outcome ?? {}) as Record<string, unknown>;
  const expected = Object.fromEntries(
    Object.keys(LEAD_OUTCOME_SCHEMA.properties).map((field) => [field, conversation.expected[field] ?? null]),
  );
  const same = Object.keys(expected).filter(
    (field) => String(outcome[field] ?? null).toLowerCase() === String(expected[field]).toLowerCase(),
  ).length;
  right += same;
  fields += Object.keys(expected).length;
  console.log(
    `${conversation.language} end -> outcome_ready ${Math.round(ms)} ms, ${same}/${Object.keys(expected).length} fields: ${JSON.stringify(outcome)}`,
  );
}
const sorted = [...times].sort((a, b) => a - b);
const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!);
console.log(
  `${times.length} sessions: end -> session.outcome_ready p50 ${at(0.5)} ms, max ${at(1)} ms; fields right ${right}/${fields}`,
);
receiver.stop();
await offline.stop();
process.exit(0);
