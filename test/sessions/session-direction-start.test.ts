// The start's direction fields on both engines (issue 32, docs/api.md#sessions-context):
// `context`, `greeting`, `client_control` and `idle_timeout_seconds` are validated like the
// other fields (422 naming the field, before any room, hold or row), kept as decided
// (docs/decisions.md#session-direction), shown on GET /v1/sessions/{id} (the context's text
// only there), and handed to the agent in its dispatch. What the agent does with them is
// test/conversation/session-direction*.test.ts.
import { describe, expect, test } from 'bun:test';
import { eq, sql } from 'drizzle-orm';
import { GREETING_MAX_CHARS, IDLE_TIMEOUT_MAX_SECONDS, SESSION_CONTEXT_MAX_CHARS } from '../../src/contract/index.ts';
import { sessions } from '../../src/sessions/schema.ts';
import { ENGINES } from '../support/service.ts';
import { sessionRowCount } from '../support/session-start.ts';
import { suiteServiceWithIdentity } from '../support/suite-service.ts';

const CONFIGURED_IDLE_SECONDS = 45;

describe.each(ENGINES)('directing a session from its start on %s', (engine) => {
  const suite = suiteServiceWithIdentity(engine, {
    livekit: 'local',
    env: {
      CREDITS_PER_AVATAR_MINUTE: '10',
      CREDITS_ONBOARDING: '0',
      SESSION_IDLE_TIMEOUT_SECONDS: String(CONFIGURED_IDLE_SECONDS),
    },
    credits: 100_000,
    identity: { language: 'en' },
  });

  const start = (body: unknown) =>
    suite.account.call('POST', '/v1/sessions/start', {
      body: typeof body === 'string' ? body : JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
  const started = async (body: Record<string, unknown>) => {
    const response = await start(body);
    expect(response.status).toBe(200);
    return ((await response.json()) as { room_name: string }).room_name;
  };
  const read = async (id: string) =>
    (await (await suite.account.call('GET', `/v1/sessions/${id}`)).json()) as Record<string, unknown>;
  /** What exists for the account: its rooms, its session rows, its balance (a hold would lower it). */
  const footprint = async () => ({
    rooms: (await suite.service.services.livekit.rooms.listRooms()).map((room) => room.name).sort(),
    rows: await sessionRowCount(suite.service, suite.account.accountId),
    balance: (await suite.service.services.ledger.balance(suite.account.accountId))!,
  });
  const dispatchOf = async (room: string) => {
    const named = (await suite.service.services.livekit.dispatches.listDispatch(room)).filter((d) => d.agentName);
    return JSON.parse(named[0]!.metadata) as Record<string, unknown>;
  };

  test.each([
    ['context longer than 8,000 characters', 'context', 'x'.repeat(SESSION_CONTEXT_MAX_CHARS + 1)],
    ['context as a number', 'context', 42],
    ['context as an object', 'context', { text: 'hi' }],
    ['context with a NUL', 'context', 'The visitor\u0000 is Zofia.'],
    ['context with a control character', 'context', 'The visitor\u0007 is Zofia.'],
    ['greeting with a control character', 'greeting', 'Hello\u001b[31m!'],
    ['greeting longer than 500 characters', 'greeting', 'x'.repeat(GREETING_MAX_CHARS + 1)],
    ['greeting as null', 'greeting', null],
    ['greeting as a list', 'greeting', ['Hi']],
    ['client_control as a string', 'client_control', 'true'],
    ['client_control as a number', 'client_control', 1],
    ['idle_timeout_seconds below 0', 'idle_timeout_seconds', -1],
    ['idle_timeout_seconds above an hour', 'idle_timeout_seconds', IDLE_TIMEOUT_MAX_SECONDS + 1],
    ['idle_timeout_seconds not whole', 'idle_timeout_seconds', 1.5],
    ['idle_timeout_seconds as a decimal string', 'idle_timeout_seconds', '1.5'],
    ['idle_timeout_seconds as a word', 'idle_timeout_seconds', 'never'],
  ])('%s: 422 naming the field; no room, no row, no hold', async (_, field, value) => {
    const before = await footprint();
    const response = await start({ identity_id: suite.identity.identity_id, [field]: value });
    expect(response.status).toBe(422);
    const detail = ((await response.json()) as { detail: { loc: unknown[]; msg: string; type: string }[] }).detail;
    expect(detail[0]).toEqual({ loc: ['body', field], msg: expect.any(String), type: expect.any(String) });
    expect(await footprint()).toEqual(before);
  });

  test('a number out of range says which bound it broke (not "one of: integer, integer")', async () => {
    for (const [value, msg, type] of [
      [
        IDLE_TIMEOUT_MAX_SECONDS + 1,
        `Expected a number less than or equal to ${IDLE_TIMEOUT_MAX_SECONDS}`,
        'less_than_equal',
      ],
      [-1, 'Expected a number greater than or equal to 0', 'greater_than_equal'],
      [1.5, 'Expected an integer', 'int_type'],
    ] as const) {
      const response = await start({ identity_id: suite.identity.identity_id, idle_timeout_seconds: value });
      expect(((await response.json()) as { detail: unknown[] }).detail).toEqual([
        { loc: ['body', 'idle_timeout_seconds'], msg, type },
      ]);
    }
  });

  test('at their bounds they are taken, shown on GET, and handed to the agent', async () => {
    const context = `The visitor's name is Zofia. ${'z'.repeat(SESSION_CONTEXT_MAX_CHARS - 29)}`;
    expect(context.length).toBe(SESSION_CONTEXT_MAX_CHARS);
    const greeting = 'g'.repeat(GREETING_MAX_CHARS);
    const before = await footprint();
    const room = await started({
      identity_id: suite.identity.identity_id,
      context,
      greeting,
      client_control: true,
      idle_timeout_seconds: IDLE_TIMEOUT_MAX_SECONDS,
    });
    expect((await footprint()).balance).toBe(before.balance - 10); // the avatar's first minute is held
    expect(await read(room)).toMatchObject({
      context,
      has_context: true,
      greeting,
      client_control: true,
      idle_timeout_seconds: IDLE_TIMEOUT_MAX_SECONDS,
    });
    expect(await dispatchOf(room)).toMatchObject({
      context,
      greeting,
      client_control: true,
      idle_timeout_seconds: IDLE_TIMEOUT_MAX_SECONDS,
    });
    const never = await started({ idle_timeout_seconds: 0 });
    expect((await read(never)).idle_timeout_seconds).toBe(0);
    expect((await dispatchOf(never)).idle_timeout_seconds).toBe(0);
  });

  test('unset: no context, the built greeting, no client control, the configured idle timeout', async () => {
    const room = await started({});
    expect(await read(room)).toMatchObject({
      context: null,
      has_context: false,
      greeting: null,
      client_control: false,
      idle_timeout_seconds: CONFIGURED_IDLE_SECONDS,
    });
    expect(await dispatchOf(room)).toMatchObject({
      context: null,
      greeting: null,
      client_control: false,
      idle_timeout_seconds: CONFIGURED_IDLE_SECONDS,
    });
  });

  test('surrounding whitespace is dropped: a blank context is none, a blank greeting is silence; "30" is 30', async () => {
    const blank = await started({ context: ' \n\t ', greeting: '   ' });
    expect(await read(blank)).toMatchObject({ context: null, has_context: false, greeting: '' });
    expect(await dispatchOf(blank)).toMatchObject({ context: null, greeting: '' });
    const padded = await started({ context: '\n  Her order shipped.\n', greeting: '  Hello, Zofia!  ' });
    expect(await read(padded)).toMatchObject({ context: 'Her order shipped.', greeting: 'Hello, Zofia!' });
    // Tabs and line breaks inside are text, as in an identity's prompt.
    const lines = await started({ context: 'Name:\tZofia\r\nOrder:\t#4417' });
    expect((await read(lines)).context).toBe('Name:\tZofia\r\nOrder:\t#4417');
    const silent = await started({ greeting: '' });
    expect((await read(silent)).greeting).toBe('');
    // A whole number in a string is taken, as by every integer field of the API (Elysia's t.Integer).
    const quoted = await started({ idle_timeout_seconds: '30' });
    expect((await read(quoted)).idle_timeout_seconds).toBe(30);
  });

  test('a session dispatched again (its agent lost) is directed as before', async () => {
    const direction = { context: 'Zofia, order #4417.', greeting: '', client_control: true, idle_timeout_seconds: 7 };
    const room = await started({ identity_id: suite.identity.identity_id, ...direction });
    // Its agent joined, and no worker has listed it for a while: lost (the watch is driven by
    // hand: without admission the service runs none of its own).
    await suite.service.services.database.db
      .update(sessions)
      .set({ agentJoinedAt: sql`now() - interval '10 seconds'`, agentSeenAt: sql`now() - interval '10 seconds'` })
      .where(eq(sessions.id, room));
    expect(await suite.service.services.agentWatch.tick()).toContain(room);
    const dispatches = (await suite.service.services.livekit.dispatches.listDispatch(room)).filter((d) => d.agentName);
    expect(dispatches).toHaveLength(2);
    for (const dispatch of dispatches) expect(JSON.parse(dispatch.metadata)).toMatchObject(direction);
  });

  test("lists say whether there is a context, without its text; the session's own page has it", async () => {
    const context = 'The visitor is a returning customer; their last order was #4417.';
    const room = await started({ context, greeting: 'Welcome back!' });
    const listed = (await (await suite.account.call('GET', '/v1/sessions?limit=1000')).json()) as Record<
      string,
      unknown
    >[];
    const item = listed.find((s) => s.session_id === room)!;
    expect(item).toMatchObject({
      context: null,
      has_context: true,
      greeting: 'Welcome back!',
      client_control: false,
      idle_timeout_seconds: CONFIGURED_IDLE_SECONDS,
    });
    expect(JSON.stringify(listed)).not.toContain('#4417');
    // The same fields in both: one response shape.
    const one = await read(room);
    expect(Object.keys(item).sort()).toEqual(Object.keys(one).sort());
    expect(one.context).toBe(context);
  });
});
