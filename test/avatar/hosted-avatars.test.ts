// The hosted avatars as pipelines (`lemonslice`, `anam`, `bey`), each offered once its key is
// set. LemonSlice animates the photo by URL; Anam and Beyond Presence animate an avatar kept at
// the provider, which identities name (`provider_avatar_id`, checked with the provider at
// create) or, for Anam, training makes from the photo. agents' own plugins make the session
// calls, unmodified, against wire fakes of the three APIs (test/support/fakes/), whose
// "avatar" joins the room with the token the plugin handed over and publishes on the agent's
// behalf, as the providers' servers do. A real LiveKit server, a real rtc-node visitor.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { ParticipantKind, TrackKind } from '@livekit/rtc-node';
import type { ReceivedSegment, ServiceSession } from '../../examples/avatar-service/service.ts';
import { AVATAR_FRAME_SIZES } from '../../src/contract/index.ts';
import { setProcessEnv } from '../support/environment.ts';
import { ANAM_STOCK_AVATAR_ID, type FakeAnam, startFakeAnam } from '../support/fakes/anam.ts';
import { BEY_AVATAR_ID, BEY_TRAINING_AVATAR_ID, type FakeBey, startFakeBey } from '../support/fakes/bey.ts';
import { type FakeLemonSlice, startFakeLemonSlice } from '../support/fakes/lemonslice.ts';
import { file, type IdentityBody, identityForm } from '../support/forms.ts';
import { sharedProviderFakes } from '../support/preload.ts';
import type { TestAccount, TestService } from '../support/service.ts';
import { postSessionStart } from '../support/session-start.ts';
import { eventually, joinAsVisitor, type StartedSession, type Visitor } from '../support/visitor.ts';
import { startAgentService } from '../support/visitor-service.ts';

const fakes = sharedProviderFakes();
let lemonslice: FakeLemonSlice;
let anam: FakeAnam;
let bey: FakeBey;
let service: TestService;
let account: TestAccount;
let restoreEnv = () => {};

beforeAll(async () => {
  lemonslice = startFakeLemonSlice();
  anam = startFakeAnam();
  bey = startFakeBey();
  // The job processes read the keys from the environment they inherit.
  const keys = {
    LEMONSLICE_API_KEY: lemonslice.apiKey,
    LEMONSLICE_API_URL: lemonslice.url,
    ANAM_API_KEY: anam.apiKey,
    ANAM_API_URL: anam.url,
    BEY_API_KEY: bey.apiKey,
    BEY_API_URL: bey.url,
  };
  restoreEnv = setProcessEnv(keys);
  ({ service, account } = await startAgentService('pglite', { ...fakes.env, ...keys }, 100_000));
});

afterAll(async () => {
  await service?.stop();
  await lemonslice?.stop();
  await anam?.stop();
  await bey?.stop();
  restoreEnv();
});

/** An asset link's path (its signature and expiry differ per file). */
const pathOf = (url: string) => new URL(url).pathname;

const astronaut = async () =>
  file(
    new Uint8Array(await Bun.file(join(import.meta.dir, '../fixtures/astronaut.png')).arrayBuffer()),
    'astronaut.png',
    'image/png',
  );

async function create(fields: Record<string, string>): Promise<Response> {
  return account.call('POST', '/v1/identities', {
    body: await identityForm({ image: await astronaut(), language: 'en', prompt: 'You are Ada.', ...fields }),
  });
}

async function created(fields: Record<string, string>): Promise<IdentityBody> {
  const response = await create(fields);
  expect(response.status).toBe(200);
  return (await response.json()) as IdentityBody;
}

async function start(identityId: string): Promise<StartedSession> {
  const started = await postSessionStart(account, { identity_id: identityId, form_factor: 'phone' });
  expect(started.status).toBe(200);
  return (await started.json()) as StartedSession;
}

/**
 * A session started on `identityId` with a visitor in it while `during` runs; then, whatever
 * happened, `reset` (a provider's failure switched off), the session ended and the visitor gone.
 */
async function visit(
  identityId: string,
  during: (session: StartedSession, visitor: Visitor) => Promise<void>,
  reset = () => {},
): Promise<void> {
  const session = await start(identityId);
  const visitor = await joinAsVisitor(session);
  try {
    await during(session, visitor);
  } finally {
    reset();
    await account.call('POST', `/v1/sessions/${session.room_name}/end`);
    await visitor.leave().catch(() => undefined);
  }
}

/** The provider's avatar in the visitor's room, publishing video and audio for the agent, which publishes nothing itself. */
async function expectProviderAvatar(visitor: Visitor, avatarSession: ServiceSession): Promise<ReceivedSegment> {
  const participants = () => [...visitor.room.remoteParticipants.values()];
  const agent = await eventually(
    () => participants().find((p) => p.identity === avatarSession.request.agentParticipantIdentity),
    20_000,
    'the agent',
  );
  const avatar = await eventually(
    () =>
      participants().find(
        (p) => p.identity === avatarSession.request.avatarParticipantIdentity && p.trackPublications.size >= 2,
      ),
    20_000,
    'the avatar with its tracks',
  );
  expect(agent.kind).toBe(ParticipantKind.AGENT);
  expect(avatar.attributes['lk.publish_on_behalf']).toBe(agent.identity);
  expect(
    [...avatar.trackPublications.values()].map((t) => (t.kind === TrackKind.KIND_AUDIO ? 'audio' : 'video')).sort(),
  ).toEqual(['audio', 'video']);
  expect(agent.trackPublications.size).toBe(0);
  // The greeting went to the provider's avatar over the avatar protocol, and played out.
  const greeting = await eventually(
    () => avatarSession.segments.find((s) => s.finished),
    20_000,
    'the greeting to play out',
  );
  expect(greeting.from).toBe(agent.identity);
  expect(greeting.finished).toMatchObject({ interrupted: false });
  return greeting;
}

/**
 * A visit while the provider is down (`outage(503)`, put back with `outage(null)` however it ends):
 * our own face instead (expectFallback), then `also`'s checks.
 */
async function visitDuringOutage(
  identityId: string,
  [pipelineId, provider]: [string, string],
  outage: (status: number | null) => void,
  also: (session: StartedSession) => Promise<void> = async () => {},
): Promise<void> {
  outage(503);
  await visit(
    identityId,
    async (session, visitor) => {
      await expectFallback(session, visitor, pipelineId, provider);
      await also(session);
    },
    () => outage(null),
  );
}

async function expectFallback(session: StartedSession, visitor: Visitor, pipelineId: string, provider: string) {
  const agent = await eventually(() => visitor.agent(), 20_000, 'the agent');
  await eventually(() => agent.trackPublications.size >= 2, 20_000, 'the agent’s tracks');
  expect([...agent.trackPublications.values()].map((p) => p.name).sort()).toEqual(['avatar', 'avatar_audio']);
  const fallback = { pipeline_id: pipelineId, fallback: 'builtin', reason: expect.stringContaining(provider) };
  await eventually(
    async () =>
      ((await (await account.call('GET', `/v1/sessions/${session.room_name}`)).json()) as { avatar_fallback: unknown })
        .avatar_fallback,
    15_000,
    'the fallback in the session',
  );
  const read = (await (await account.call('GET', `/v1/sessions/${session.room_name}`)).json()) as {
    avatar_fallback: unknown;
  };
  expect(read.avatar_fallback).toEqual(fallback);
}

describe('provider avatars at create', () => {
  test('each is listed, as an avatar service of its provider', async () => {
    const pipelines = (await (await account.call('GET', '/v1/pipelines')).json()) as Array<{
      pipeline_id: string;
      renders: { kind: string; provider: string | null };
    }>;
    for (const provider of ['lemonslice', 'anam', 'bey']) {
      expect(pipelines.find((p) => p.pipeline_id === provider)?.renders).toMatchObject({
        kind: 'avatar_service',
        provider,
      });
    }
  });

  test('an unknown, missing, untrained or misplaced provider_avatar_id is refused with the field named, and nothing is kept or charged', async () => {
    const before = {
      identities: await service.count('identities'),
      ledger: await service.count('credit_ledger'),
      files: (await service.assetKeys()).length,
    };
    const refusals: Array<[Record<string, string>, string]> = [
      [{ pipeline_id: 'anam', provider_avatar_id: 'no-such-avatar' }, 'unknown_provider_avatar'],
      [{ pipeline_id: 'bey', provider_avatar_id: 'no-such-avatar' }, 'unknown_provider_avatar'],
      [{ pipeline_id: 'bey' }, 'missing'],
      [{ pipeline_id: 'bey', provider_avatar_id: BEY_TRAINING_AVATAR_ID }, 'provider_avatar_unavailable'],
      [{ provider_avatar_id: BEY_AVATAR_ID }, 'unsupported_field'],
    ];
    for (const [fields, type] of refusals) {
      const response = await create(fields);
      expect(response.status).toBe(422);
      const body = (await response.json()) as { detail: Array<{ loc: string[]; type: string }> };
      expect(body.detail).toContainEqual(expect.objectContaining({ loc: ['body', 'provider_avatar_id'], type }));
    }
    // Anam refusing to make the avatar is the provider's failure: 502, and still nothing kept.
    anam.failCreateWith = 500;
    try {
      const refused = await create({ pipeline_id: 'anam' });
      expect(refused.status).toBe(502);
      expect(((await refused.json()) as { detail: string }).detail).toContain('Anam');
    } finally {
      anam.failCreateWith = null;
    }
    expect(await service.count('identities')).toBe(before.identities);
    expect(await service.count('credit_ledger')).toBe(before.ledger);
    expect((await service.assetKeys()).length).toBe(before.files);
  }, 60_000);

  test('the provider avatar cannot be changed afterwards', async () => {
    const identity = await created({ pipeline_id: 'bey', provider_avatar_id: BEY_AVATAR_ID });
    const form = new FormData();
    form.set('provider_avatar_id', ANAM_STOCK_AVATAR_ID);
    const response = await account.call('PATCH', `/v1/identities/${identity.identity_id}`, { body: form });
    expect(response.status).toBe(422);
    expect(((await response.json()) as { detail: Array<{ type: string }> }).detail[0]!.type).toBe('immutable_field');
  });
});

describe('LemonSlice', () => {
  test('its avatar joins the room for the agent, animated from the identity’s photo, and takes the speech at 16 kHz', async () => {
    const identity = await created({ pipeline_id: 'lemonslice' });
    expect(identity.provider_avatar_id).toBeNull();
    // Trained as the built-in face is (its fallback when LemonSlice fails): the rig is stored.
    expect(
      (await service.assetKeys()).some(
        (key) => key.includes(identity.identity_id) && key.endsWith('portrait.rig.json'),
      ),
    ).toBe(true);
    await visit(identity.identity_id, async (session, visitor) => {
      // The plugin called LemonSlice's API with the key, a LiveKit transport and the URL of the
      // photo's rendition (the dispatch's image_url), which LemonSlice could fetch.
      const call = await eventually(() => lemonslice.requests.at(-1), 20_000, 'the LemonSlice API call');
      expect(call.apiKey).toBe(lemonslice.apiKey);
      expect(call.body.transport_type).toBe('livekit');
      expect(pathOf(call.body.agent_image_url!)).toBe(pathOf(identity.image).replace(/image\.\w+$/, 'render.png'));
      expect(call.imageFetched).toBe(true);
      const avatarSession = await eventually(
        () => lemonslice.sessions.find((s) => s.request.roomName === session.room_name),
        20_000,
        'the avatar in the room',
      );
      const greeting = await expectProviderAvatar(visitor, avatarSession);
      expect(greeting.attributes).toMatchObject({ sample_rate: '16000', num_channels: '1' });
    });
  }, 90_000);

  test('LemonSlice down: the session goes on with our own face, and the session and its end say why', async () => {
    const identity = await created({ pipeline_id: 'lemonslice' });
    await visitDuringOutage(
      identity.identity_id,
      ['lemonslice', 'LemonSlice'],
      (status) => {
        lemonslice.failWith = status;
      },
      async (session) => {
        expect(pathOf(lemonslice.requests.at(-1)!.body.agent_image_url!)).toBe(
          pathOf(identity.image).replace(/image\.\w+$/, 'render.png'),
        );
        const ended = (await (await account.call('POST', `/v1/sessions/${session.room_name}/end`)).json()) as {
          metadata: { avatar_fallback: unknown };
        };
        expect(ended.metadata.avatar_fallback).toEqual({
          pipeline_id: 'lemonslice',
          fallback: 'builtin',
          reason: expect.stringContaining('LemonSlice'),
        });
      },
    );
  }, 60_000);
});

describe('Anam', () => {
  test('training makes an Anam avatar from the photo; a session brings it into the room; retraining and deleting release it at Anam', async () => {
    const identity = await created({ pipeline_id: 'anam' });
    // Made at Anam from the photo's rendition (a PNG), named after the identity, not the person.
    const madeId = identity.provider_avatar_id!;
    expect(madeId).toStartWith('anam-oneshot-');
    const made = anam.avatars.get(madeId)!;
    expect(made.displayName).toBe(`Likeness ${identity.identity_id}`);
    expect([...made.image!.subarray(1, 4)]).toEqual([...Buffer.from('PNG')]);
    // Trained as the built-in face too: the fallback when Anam fails.
    expect(
      (await service.assetKeys()).some(
        (key) => key.includes(identity.identity_id) && key.endsWith('portrait.rig.json'),
      ),
    ).toBe(true);

    await visit(identity.identity_id, async (session, visitor) => {
      // The plugin asked for a session token with the identity's avatar, the job's LiveKit
      // credentials and our portrait frame size, then started the engine with that token.
      const tokenCall = await eventually(
        () =>
          anam.calls.find(
            (c) =>
              c.path === '/v1/auth/session-token' &&
              (c.body?.personaConfig as { avatarId?: string })?.avatarId === madeId,
          ),
        20_000,
        'the session token call',
      );
      expect(tokenCall.authorization).toBe(`Bearer ${anam.apiKey}`);
      expect(tokenCall.body?.environment).toMatchObject({
        livekitUrl: expect.stringMatching(/^wss?:/),
        livekitToken: expect.any(String),
      });
      // A phone session is portrait: Anam renders at our portrait frame size.
      expect(tokenCall.body?.sessionOptions).toEqual({
        videoWidth: AVATAR_FRAME_SIZES.portrait.width,
        videoHeight: AVATAR_FRAME_SIZES.portrait.height,
      });
      const avatarSession = await eventually(
        () => anam.sessions.find((s) => s.request.roomName === session.room_name),
        20_000,
        'Anam’s avatar in the room',
      );
      await expectProviderAvatar(visitor, avatarSession);
    });

    // A new photo makes a new Anam avatar; the old one is deleted at Anam once it is replaced.
    const form = await identityForm({ image: await astronaut(), prompt: 'You are Ada, retrained.' });
    for (const field of ['name', 'language']) form.delete(field);
    const retrain = await account.call('PATCH', `/v1/identities/${identity.identity_id}`, { body: form });
    expect(retrain.status).toBe(202);
    const retrained = await eventually(
      async () => {
        const read = (await (
          await account.call('GET', `/v1/identities/${identity.identity_id}`)
        ).json()) as IdentityBody;
        return read.status === 'ready' && read.provider_avatar_id !== madeId ? read : undefined;
      },
      30_000,
      'the retrain',
    );
    expect(retrained.detail).toBeNull();
    expect(anam.avatars.has(retrained.provider_avatar_id!)).toBe(true);
    // Released once the new training is in place (right after the status turns ready).
    await eventually(() => !anam.avatars.has(madeId), 5_000, 'the replaced Anam avatar to be deleted');

    expect((await account.call('DELETE', `/v1/identities/${identity.identity_id}`)).status).toBe(204);
    expect(anam.avatars.has(retrained.provider_avatar_id!)).toBe(false);
  }, 120_000);

  test('an identity naming an Anam avatar uses it as is, and deleting the identity leaves it at Anam', async () => {
    const creates = anam.calls.filter((c) => c.method === 'POST' && c.path === '/v1/avatars').length;
    const identity = await created({ pipeline_id: 'anam', provider_avatar_id: ANAM_STOCK_AVATAR_ID });
    expect(identity.provider_avatar_id).toBe(ANAM_STOCK_AVATAR_ID);
    expect(anam.calls.filter((c) => c.method === 'POST' && c.path === '/v1/avatars').length).toBe(creates);
    expect((await account.call('DELETE', `/v1/identities/${identity.identity_id}`)).status).toBe(204);
    expect(anam.avatars.has(ANAM_STOCK_AVATAR_ID)).toBe(true);
  });

  test('Anam down: the session goes on with our own face, and the session says why', async () => {
    const identity = await created({ pipeline_id: 'anam', provider_avatar_id: ANAM_STOCK_AVATAR_ID });
    await visitDuringOutage(identity.identity_id, ['anam', 'Anam'], (status) => {
      anam.failSessionsWith = status;
    });
  }, 60_000);
});

describe('Beyond Presence', () => {
  test('a session brings the identity’s Bey avatar into the room', async () => {
    const identity = await created({ pipeline_id: 'bey', provider_avatar_id: BEY_AVATAR_ID });
    expect(identity.provider_avatar_id).toBe(BEY_AVATAR_ID);
    await visit(identity.identity_id, async (session, visitor) => {
      const call = await eventually(
        () =>
          bey.requests.find(
            (r) =>
              r.body.livekit_token &&
              JSON.parse(Buffer.from(r.body.livekit_token.split('.')[1]!, 'base64url').toString()).video?.room ===
                session.room_name,
          ),
        20_000,
        'the Bey API call',
      );
      expect(call.apiKey).toBe(bey.apiKey);
      expect(call.body.avatar_id).toBe(BEY_AVATAR_ID);
      const avatarSession = await eventually(
        () => bey.sessions.find((s) => s.request.roomName === session.room_name),
        20_000,
        'Bey’s avatar in the room',
      );
      await expectProviderAvatar(visitor, avatarSession);
    });
  }, 90_000);

  test('Bey down: the session goes on with our own face, and the session says why', async () => {
    const identity = await created({ pipeline_id: 'bey', provider_avatar_id: BEY_AVATAR_ID });
    await visitDuringOutage(identity.identity_id, ['bey', 'Bey'], (status) => {
      bey.failWith = status;
    });
  }, 60_000);
});
