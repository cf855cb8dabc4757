// Outcomes at the API (issue 44 point 1; docs/api.md#outcomes), on both engines over a real
// LiveKit (no agent: the job's report is sent as a job would, with the session's report token):
// `outcome_schema` on a start and on an identity is checked like a tool's parameters, with a
// description on each field (422 naming the field; a refused start leaves no room, row or
// hold), the identity's is the default and a start's replaces it, GET and the dispatch carry
// it; the job's outcome is checked against the schema before it is kept, shows on GET and is
// sent as `session.outcome_ready` after `session.ended`; the sweep gives up on one never written.
import { beforeAll, describe, expect, test } from 'bun:test';
import { giveUpOnOutcomes, OUTCOME_GIVEN_UP_DETAIL, OUTCOME_WAIT_SECONDS } from '../../src/outcomes/index.ts';
import { sessionTranscripts } from '../../src/sessions/schema.ts';
import { form, type IdentityBody, identityForm } from '../support/forms.ts';
import { ENGINES } from '../support/service.ts';
import { sessionRowCount } from '../support/session-start.ts';
import { suiteServiceWithWebhooks } from '../support/suite-service.ts';
import { eventually } from '../support/visitor.ts';
import { json } from '../support/webhooks.ts';

const LEAD = {
  type: 'object',
  properties: {
    name: { type: 'string', description: "The visitor's name" },
    wants_demo: { type: 'boolean', description: 'Whether the visitor asked for a demo' },
    demo_day: { type: 'string', enum: ['monday', 'tuesday'], description: 'The day the visitor picked' },
  },
};
const ORDER = {
  type: 'object',
  properties: { order_id: { type: 'integer', minimum: 1, description: 'The order the visitor asked about' } },
};

describe.each(ENGINES)('outcomes at the API on %s', (engine) => {
  const suite = suiteServiceWithWebhooks(engine, ['session.ended', 'session.outcome_ready'], {
    livekit: 'local',
    env: { CREDITS_ONBOARDING: '0' },
    credits: 10_000,
  });
  let identity: IdentityBody;

  beforeAll(async () => {
    const created = await suite.account.call('POST', '/v1/identities', {
      body: await identityForm({ language: 'en', outcome_schema: JSON.stringify(LEAD) }),
    });
    expect(created.status).toBe(200);
    identity = (await created.json()) as IdentityBody;
  });

  const start = (body: unknown) => suite.account.call('POST', '/v1/sessions/start', json(body));
  const read = async (id: string) =>
    (await (await suite.account.call('GET', `/v1/sessions/${id}`)).json()) as Record<string, unknown>;
  const dispatchOf = async (room: string) => {
    const named = (await suite.service.services.livekit.dispatches.listDispatch(room)).filter((d) => d.agentName);
    return JSON.parse(named[0]!.metadata) as Record<string, unknown>;
  };
  const footprint = async () => ({
    rooms: (await suite.service.services.livekit.rooms.listRooms()).length,
    rows: await sessionRowCount(suite.service, suite.account.accountId),
    balance: await suite.service.services.ledger.balance(suite.account.accountId),
  });

  test('a start’s outcome_schema is checked like tool parameters, each field described; refused, it leaves nothing', async () => {
    const before = await footprint();
    for (const [schema, loc, type] of [
      [{ type: 'array' }, ['body', 'outcome_schema', 'type'], 'schema_invalid'],
      [{ type: 'object', properties: {} }, ['body', 'outcome_schema', 'properties'], 'schema_invalid'],
      [
        { type: 'object', properties: { name: { type: 'string' } } },
        ['body', 'outcome_schema', 'properties', 'name', 'description'],
        'description_required',
      ],
      [
        { type: 'object', properties: { name: { type: 'string', description: 'x', pattern: '(a+)+$' } } },
        ['body', 'outcome_schema', 'properties', 'name', 'pattern'],
        'schema_keyword_unsupported',
      ],
      [
        { type: 'object', properties: { x: { type: 'string', description: 'y'.repeat(17_000) } } },
        ['body', 'outcome_schema'],
        'schema_too_large',
      ],
    ] as const) {
      const answer = await start({ identity_id: identity.identity_id, outcome_schema: schema });
      expect(answer.status).toBe(422);
      const body = (await answer.json()) as { detail: { loc: string[]; type: string; msg: string }[] };
      expect(body.detail[0]).toMatchObject({ loc, type });
      expect(body.detail[0]!.msg).toMatch(
        loc.at(-1) === 'description' ? /^name needs a description/ : /outcome_schema|pattern/,
      );
    }
    // Not an object at all: the edge's own schema.
    expect((await start({ identity_id: identity.identity_id, outcome_schema: 'name' })).status).toBe(422);
    expect(await footprint()).toEqual(before);
  });

  test('the identity’s schema is the default, a start’s replaces it; GET, lists and the dispatch say which', async () => {
    expect(identity.outcome_schema).toEqual(LEAD);
    const byIdentity = (await (await start({ identity_id: identity.identity_id })).json()) as { room_name: string };
    const byStart = (await (await start({ identity_id: identity.identity_id, outcome_schema: ORDER })).json()) as {
      room_name: string;
    };
    const bare = (await (await start({ avatar_enabled: false })).json()) as { room_name: string };
    expect(await read(byIdentity.room_name)).toMatchObject({
      outcome_schema: LEAD,
      outcome: null,
      outcome_status: 'none',
      outcome_detail: null,
    });
    // The customer's order of fields is kept (the database's jsonb would sort them by length).
    const kept = (await read(byIdentity.room_name)).outcome_schema as { properties: Record<string, unknown> };
    expect(Object.keys(kept.properties)).toEqual(['name', 'wants_demo', 'demo_day']);
    expect((await read(byStart.room_name)).outcome_schema).toEqual(ORDER);
    expect((await read(bare.room_name)).outcome_schema).toBeNull();
    expect((await dispatchOf(byIdentity.room_name)).outcome_schema).toEqual(LEAD);
    expect((await dispatchOf(byStart.room_name)).outcome_schema).toEqual(ORDER);
    expect((await dispatchOf(bare.room_name)).outcome_schema).toBeNull();
    // Lists leave the schema out (16 KB a row), as they do the context.
    const list = (await (await suite.account.call('GET', '/v1/sessions')).json()) as Record<string, unknown>[];
    expect(list.find((s) => s.session_id === byStart.room_name)).toMatchObject({ outcome_schema: null });
    for (const room of [byIdentity, byStart, bare])
      await suite.account.call('POST', `/v1/sessions/${room.room_name}/end`);
  });

  test('an identity’s outcome_schema: JSON text in its form, checked, replaced and cleared with PATCH', async () => {
    const patch = (value: string) =>
      suite.account.call('PATCH', `/v1/identities/${identity.identity_id}`, { body: form({ outcome_schema: value }) });
    const notJson = await patch('{"type": "object",');
    expect(notJson.status).toBe(422);
    expect(((await notJson.json()) as { detail: { loc: string[]; type: string }[] }).detail[0]).toMatchObject({
      loc: ['body', 'outcome_schema'],
      type: 'json_invalid',
    });
    const undescribed = await patch(JSON.stringify({ type: 'object', properties: { a: { type: 'string' } } }));
    expect(undescribed.status).toBe(422);
    expect(
      ((await (await suite.account.call('GET', `/v1/identities/${identity.identity_id}`)).json()) as IdentityBody)
        .outcome_schema,
    ).toEqual(LEAD);
    const replaced = await patch(JSON.stringify(ORDER));
    expect(replaced.status).toBe(200);
    expect(((await replaced.json()) as IdentityBody).outcome_schema).toEqual(ORDER);
    const cleared = await patch('null');
    expect(((await cleared.json()) as IdentityBody).outcome_schema).toBeNull();
    expect((await patch(JSON.stringify(LEAD))).status).toBe(200);
    // A create refuses a bad one too, before any training (nothing is kept).
    const count = async () => ((await (await suite.account.call('GET', '/v1/identities')).json()) as unknown[]).length;
    const before = await count();
    const refused = await suite.account.call('POST', '/v1/identities', {
      body: await identityForm({ outcome_schema: JSON.stringify({ type: 'object', properties: { a: 1 } }) }),
    });
    expect(refused.status).toBe(422);
    expect(await count()).toBe(before);
  });

  /** A started session with the report token its job would hold, and a visitor turn in its transcript. */
  async function sessionWithTurn(schema: Record<string, unknown> = LEAD) {
    const started = (await (await start({ identity_id: identity.identity_id, outcome_schema: schema })).json()) as {
      room_name: string;
    };
    const id = started.room_name;
    const token = (await dispatchOf(id)).report_token as string;
    await suite.service.services.database.db
      .insert(sessionTranscripts)
      .values({ sessionId: id, role: 'user', text: 'I am Zofia.', turnId: 'turn-1', startedAt: new Date() });
    const report = (body: unknown) =>
      fetch(`${suite.service.url}/internal/sessions/${id}/reports`, {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      });
    return { id, report };
  }

  const outcomeEvents = (id: string) =>
    suite.receiver
      .verified('/hooks', suite.secret)
      .filter((event) => event.type === 'session.outcome_ready' && event.data.session_id === id);

  test('the job’s outcome is kept after the end, shows on GET and comes as session.outcome_ready after session.ended', async () => {
    const { id, report } = await sessionWithTurn();
    expect((await suite.account.call('POST', `/v1/sessions/${id}/end`)).status).toBe(200);
    expect((await read(id)).outcome_status).toBe('pending');
    const outcome = { name: 'Zofia', wants_demo: true, demo_day: null };
    // Reported in another order: kept in the schema's.
    expect(
      (await report({ type: 'outcome', values: { demo_day: null, wants_demo: true, name: 'Zofia' } })).status,
    ).toBe(200);
    expect(await read(id)).toMatchObject({ outcome, outcome_status: 'ready', outcome_detail: null });
    expect(Object.keys((await read(id)).outcome as object)).toEqual(['name', 'wants_demo', 'demo_day']);
    const [event] = await suite.receiver.waitFor('session.outcome_ready', () => {
      const events = outcomeEvents(id);
      return events.length ? events : undefined;
    });
    expect(event!.data).toEqual({ session_id: id, identity_id: identity.identity_id, outcome });
    // Announced after the end: its event is written later (deliveries may still arrive in any
    // order, so the end's is waited for too: on a loaded machine it came after, run 125).
    await suite.receiver.waitFor('session.ended', () =>
      suite.receiver
        .verified('/hooks', suite.secret)
        .some((event) => event.type === 'session.ended' && event.data.session_id === id),
    );
    const stamped = suite.receiver
      .on('/hooks')
      .map((r) => JSON.parse(r.body) as { type: string; timestamp: string; data: { session_id: string } })
      .filter((e) => e.data.session_id === id)
      .sort((a, b) => a.timestamp.localeCompare(b.timestamp))
      .map((e) => e.type);
    expect(stamped).toEqual(['session.ended', 'session.outcome_ready']);
    // A second report changes nothing once it is settled.
    await report({ type: 'outcome', values: { name: 'Someone else', wants_demo: false, demo_day: 'monday' } });
    expect((await read(id)).outcome).toEqual(outcome);
    await Bun.sleep(500);
    expect(outcomeEvents(id)).toHaveLength(1);
  });

  test('an outcome that does not fit its schema is refused as a failure, with the reason; so is a missing field', async () => {
    for (const [values, reason] of [
      [{ name: 'Zofia', wants_demo: 'yes', demo_day: null }, 'wants_demo must be boolean'],
      [{ name: 'Zofia', wants_demo: true, demo_day: 'sunday' }, 'demo_day must be equal to one of the allowed values'],
      [{ name: 'Zofia', wants_demo: true }, "must have required property 'demo_day'"],
      [{ name: 'Zofia', wants_demo: true, demo_day: null, extra: 1 }, 'must NOT have additional properties'],
    ] as const) {
      const { id, report } = await sessionWithTurn();
      await suite.account.call('POST', `/v1/sessions/${id}/end`);
      expect((await report({ type: 'outcome', values })).status).toBe(200);
      const body = await read(id);
      expect(body).toMatchObject({ outcome: null, outcome_status: 'failed' });
      expect(body.outcome_detail).toContain(reason);
      expect(outcomeEvents(id)).toEqual([]);
    }
    // The job's own failure keeps its reason.
    const { id, report } = await sessionWithTurn(ORDER);
    await suite.account.call('POST', `/v1/sessions/${id}/end`);
    await report({ type: 'outcome', values: null, detail: 'the language model did not answer within 30 s' });
    expect(await read(id)).toMatchObject({
      outcome: null,
      outcome_status: 'failed',
      outcome_detail: 'the language model did not answer within 30 s',
    });
  });

  test('no visitor turn, no outcome; the sweep gives up on one never written', async () => {
    const started = (await (await start({ identity_id: identity.identity_id })).json()) as { room_name: string };
    await suite.account.call('POST', `/v1/sessions/${started.room_name}/end`);
    expect(await read(started.room_name)).toMatchObject({ outcome_status: 'none', outcome: null });

    const { id } = await sessionWithTurn();
    await suite.account.call('POST', `/v1/sessions/${id}/end`);
    const { db } = suite.service.services.database;
    await eventually(async () => (await read(id)).outcome_status === 'pending', 5_000, 'pending');
    expect(await giveUpOnOutcomes(db)).toBe(0);
    expect(await giveUpOnOutcomes(db, new Date(Date.now() + (OUTCOME_WAIT_SECONDS + 1) * 1000))).toBeGreaterThan(0);
    expect(await read(id)).toMatchObject({
      outcome: null,
      outcome_status: 'failed',
      outcome_detail: OUTCOME_GIVEN_UP_DETAIL,
    });
  });
});
