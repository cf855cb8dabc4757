// POST /v1/sessions/start on a real LiveKit server (docs/api.md#sessions-start): the rules in order, the
// response, the token, and nothing half-made when a request is refused.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { identities } from '../../src/identities/schema.ts';
import * as fx from '../fixtures/index.ts';
import { file, type IdentityBody, type identityForm } from '../support/forms.ts';
import { ENGINES, startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { createIdentity } from '../support/session-start.ts';

function jwtClaims(token: string): Record<string, any> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
}

describe.each(ENGINES)('starting sessions on %s', (engine) => {
  let service: TestService;
  let account: TestAccount;
  let withVoice: IdentityBody;
  let englishOnly: IdentityBody;
  let polishStored: IdentityBody;

  const start = (
    body: unknown,
    who = account,
    headers: Record<string, string> = { 'content-type': 'application/json' },
  ) =>
    who.call('POST', '/v1/sessions/start', { body: typeof body === 'string' ? body : JSON.stringify(body), headers });
  const rooms = async () => (await service.services.livekit.rooms.listRooms()).map((r) => r.name).sort();
  /** English by default: an identity's default language is auto, which needs a multilingual voice. */
  const makeIdentity = async (fields: Parameters<typeof identityForm>[0], who = account) =>
    await createIdentity(who, { language: 'en', ...fields });

  beforeAll(async () => {
    service = await startTestService(engine, {
      livekit: 'local',
      env: { CREDITS_PER_AVATAR_MINUTE: '10', CREDITS_ONBOARDING: '0' },
    });
    account = await service.account({ credits: 100_000 });
    withVoice = await makeIdentity({ audio: file(fx.wav({ seconds: 10 }), 'v.wav'), language: 'en' });
    englishOnly = await makeIdentity({ language: 'en' });
    polishStored = await makeIdentity({ language: 'pl', audio: file(fx.wav({ seconds: 10 }), 'v.wav') });
  });
  afterAll(() => service.stop());

  test('an empty object starts a default session: 200 with every response field', async () => {
    const response = await start({});
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, any>;
    // The spec's fields, and `record` (ours, docs/api.md#recordings): false unless asked for.
    expect(Object.keys(body).sort()).toEqual([
      'created_at',
      'dispatch_id',
      'record',
      'room_name',
      'rtc_url',
      'token',
      'user',
      'visual_awareness',
    ]);
    expect(body.user).toEqual({ id: account.accountId });
    expect(body.visual_awareness).toBe(false);
    expect(body.record).toBe(false);
    expect(body.rtc_url).toBe(service.services.livekit.publicUrl);
    expect(body.rtc_url).toMatch(/^wss?:\/\//);
    expect(body.dispatch_id).toBeTruthy();
    expect(await rooms()).toContain(body.room_name);
    const dispatches = await service.services.livekit.dispatches.listDispatch(body.room_name);
    // LiveKit adds an unnamed default dispatch to every room; ours is the named, explicit one.
    const named = dispatches.filter((d) => d.agentName);
    expect(named.map((d) => [d.id, d.agentName])).toEqual([[body.dispatch_id, service.config.livekit.agentName]]);
  });

  test('no body at all also starts a default session', async () => {
    const response = await account.call('POST', '/v1/sessions/start');
    expect(response.status).toBe(200);
  });

  test('the token is a JWT for this room only, a fresh participant, join/publish/subscribe/data grants, short-lived', async () => {
    const a = (await (await start({})).json()) as Record<string, any>;
    const b = (await (await start({})).json()) as Record<string, any>;
    const claims = jwtClaims(a.token);
    expect(claims.video).toMatchObject({
      room: a.room_name,
      roomJoin: true,
      canPublish: true,
      canPublishSources: ['microphone', 'camera'],
      canSubscribe: true,
      canPublishData: true,
    });
    expect(claims.sub).toMatch(/^visitor_/);
    expect(jwtClaims(b.token).sub).not.toBe(claims.sub);
    expect(a.room_name).not.toBe(b.room_name);
    expect(claims.exp - claims.nbf).toBe(service.config.sessions.tokenTtlSeconds);
    expect(claims.iss).toBe(service.services.livekit.apiKey);
  });

  test('an identity implies the avatar and visual awareness; its session holds one minute of credits', async () => {
    const payer = await service.account({ credits: 25 });
    const identity = await makeIdentity({}, payer);
    const response = await start({ identity_id: identity.identity_id }, payer);
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, any>;
    expect(body.visual_awareness).toBe(true);
    expect(await service.services.ledger.balance(payer.accountId)).toBe(15);
    const session = (await (await payer.call('GET', `/v1/sessions/${body.room_name}`)).json()) as Record<string, any>;
    expect(session).toMatchObject({
      status: 'running',
      identity_id: identity.identity_id,
      avatar_enabled: true,
      language: 'en',
    });
  });

  test('visual_awareness false opts out; true is honoured without an identity', async () => {
    expect(
      ((await (await start({ identity_id: withVoice.identity_id, visual_awareness: false })).json()) as any)
        .visual_awareness,
    ).toBe(false);
    expect(((await (await start({ visual_awareness: true })).json()) as any).visual_awareness).toBe(true);
  });

  test('effective language: request, then the identity’s stored language, then en', async () => {
    const read = async (body: unknown) => {
      const started = (await (await start(body)).json()) as any;
      return ((await (await account.call('GET', `/v1/sessions/${started.room_name}`)).json()) as any).language;
    };
    expect(await read({ identity_id: polishStored.identity_id })).toBe('pl');
    expect(await read({ identity_id: polishStored.identity_id, language: 'es' })).toBe('es');
    expect(await read({ identity_id: polishStored.identity_id, language: 'auto' })).toBe('auto');
    expect(await read({})).toBe('en');
    const stored = (await (
      await account.call('GET', `/v1/identities/${polishStored.identity_id}`)
    ).json()) as IdentityBody;
    expect(stored.language).toBe('pl');
  });

  test.each([
    ['auto', {}],
    ['es', {}],
    ['uk', {}],
  ])('language %s without an identity answers 422 and creates no room', async (language) => {
    const before = await rooms();
    const response = await start({ language });
    expect(response.status).toBe(422);
    expect(((await response.json()) as any).detail[0]).toMatchObject({
      loc: ['body', 'language'],
      type: 'multilingual_voice_required',
    });
    expect(await rooms()).toEqual(before);
  });

  test('a non-en language on an identity with an English-only voice answers 422, with no fallback', async () => {
    const before = await rooms();
    for (const language of ['auto', 'es', 'pl', 'uk']) {
      const response = await start({ identity_id: englishOnly.identity_id, language });
      expect(response.status).toBe(422);
    }
    expect((await start({ identity_id: englishOnly.identity_id, language: 'en' })).status).toBe(200);
    const stored = await makeIdentity({ language: 'auto' });
    expect((await start({ identity_id: stored.identity_id })).status).toBe(422);
    expect((await rooms()).length).toBe(before.length + 1);
  });

  test.each([
    ['malformed JSON', '{"identity_id": '],
    ['a JSON array', '[]'],
    ['language outside the five', { language: 'fr' }],
    ['form_factor outside phone/desktop', { form_factor: 'tablet' }],
    ['avatar_enabled as a string', { avatar_enabled: 'yes' }],
    ['visual_awareness as a number', { visual_awareness: 1 }],
    ['identity_id as a number', { identity_id: 42 }],
    ['avatar_enabled without an identity', { avatar_enabled: true }],
  ])('%s answers 422 before any room exists', async (_, body) => {
    const before = await rooms();
    const response = await start(body);
    expect(response.status).toBe(422);
    const detail = ((await response.json()) as any).detail;
    expect(Array.isArray(detail)).toBe(true);
    expect(detail[0]).toEqual({ loc: expect.any(Array), msg: expect.any(String), type: expect.any(String) });
    expect(await rooms()).toEqual(before);
  });

  test('an unknown identity, or another account’s, answers 404 and creates no room', async () => {
    const other = await service.account();
    const before = await rooms();
    const missing = await start({ identity_id: 'idn_0000000000000000000000' });
    const theirs = await start({ identity_id: withVoice.identity_id }, other);
    expect(missing.status).toBe(404);
    expect(theirs.status).toBe(404);
    expect(await theirs.json()).toEqual(await missing.json());
    expect(await rooms()).toEqual(before);
  });

  test('an identity that is not ready answers 409 and creates no room', async () => {
    const training = await makeIdentity({});
    await service.services.database.db
      .update(identities)
      .set({ status: 'training' })
      .where(eq(identities.id, training.identity_id));
    const before = await rooms();
    const response = await start({ identity_id: training.identity_id });
    expect(response.status).toBe(409);
    expect(typeof ((await response.json()) as any).detail).toBe('string');
    expect(await rooms()).toEqual(before);
  });

  test('an avatar session the account cannot pay the first minute of answers 402 and creates nothing', async () => {
    const poor = await service.account({ credits: 9 });
    const identity = await makeIdentity({}, poor);
    const before = await rooms();
    const response = await start({ identity_id: identity.identity_id }, poor);
    expect(response.status).toBe(402);
    expect(await rooms()).toEqual(before);
    expect(await service.services.ledger.balance(poor.accountId)).toBe(9);
    expect(await (await poor.call('GET', '/v1/sessions')).json()).toEqual([]);
    expect((await start({}, poor)).status).toBe(200); // no avatar: nothing to bill
  });

  test('50 concurrent starts against a balance for 5 sessions never overspend', async () => {
    const payer = await service.account({ credits: 50 });
    const identity = await makeIdentity({}, payer);
    const statuses = await Promise.all(
      Array.from({ length: 50 }, async () => (await start({ identity_id: identity.identity_id }, payer)).status),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 402)).toHaveLength(45);
    expect(await service.services.ledger.balance(payer.accountId)).toBe(0);
    const running = (await (await payer.call('GET', '/v1/sessions?status=running')).json()) as any[];
    expect(running).toHaveLength(5);
    for (const s of running) expect((await payer.call('POST', `/v1/sessions/${s.session_id}/end`)).status).toBe(200);
    expect(await service.services.ledger.balance(payer.accountId)).toBe(50); // holds given back, nothing streamed
  });

  test('a session can only be started with a valid key', async () => {
    expect(
      (
        await service.call('POST', '/v1/sessions/start', {
          body: '{}',
          headers: { 'content-type': 'application/json' },
        })
      ).status,
    ).toBe(401);
  });
});
