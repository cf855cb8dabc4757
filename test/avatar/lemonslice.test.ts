// LemonSlice's hosted avatar as a pipeline (`lemonslice`), offered once LEMONSLICE_API_KEY is
// set. agents' own LemonSlice plugin makes the API call, unmodified, against a wire fake of
// LemonSlice's session API (test/support/fakes/lemonslice.ts) whose "avatar" joins the room
// with the token the plugin handed it and publishes on the agent's behalf, as LemonSlice's
// servers do. A real LiveKit server, a real rtc-node visitor.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ParticipantKind, TrackKind } from '@livekit/rtc-node';
import { join } from 'node:path';
import { setProcessEnv } from '../support/environment.ts';
import { file, identityForm, type IdentityBody } from '../support/forms.ts';
import { startFakeLemonSlice, type FakeLemonSlice } from '../support/fakes/lemonslice.ts';
import { sharedProviderFakes } from '../support/preload.ts';
import { startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { eventually, joinAsVisitor, type StartedSession } from '../support/visitor.ts';

const fakes = sharedProviderFakes();
let lemonslice: FakeLemonSlice;
let service: TestService;
let account: TestAccount;
let restoreEnv = () => {};

beforeAll(async () => {
  lemonslice = startFakeLemonSlice();
  restoreEnv = setProcessEnv({ LEMONSLICE_API_KEY: lemonslice.apiKey, LEMONSLICE_API_URL: lemonslice.url });
  service = await startTestService('pglite', {
    livekit: 'local',
    agent: true,
    env: { ...fakes.env, CREDITS_ONBOARDING: '0', LEMONSLICE_API_KEY: lemonslice.apiKey, LEMONSLICE_API_URL: lemonslice.url },
  });
  account = await service.account({ credits: 10_000 });
});

afterAll(async () => {
  await service?.stop();
  await lemonslice?.stop();
  restoreEnv();
});

async function lemonsliceIdentity(): Promise<IdentityBody> {
  const photo = file(new Uint8Array(await Bun.file(join(import.meta.dir, '../fixtures/astronaut.png')).arrayBuffer()), 'astronaut.png', 'image/png');
  const created = await account.call('POST', '/v1/identities', { body: await identityForm({ image: photo, language: 'en', pipeline_id: 'lemonslice', prompt: 'You are Ada.' }) });
  expect(created.status).toBe(200);
  return (await created.json()) as IdentityBody;
}

async function start(identityId: string): Promise<StartedSession> {
  const started = await account.call('POST', '/v1/sessions/start', { body: JSON.stringify({ identity_id: identityId, form_factor: 'phone' }), headers: { 'content-type': 'application/json' } });
  expect(started.status).toBe(200);
  return (await started.json()) as StartedSession;
}

describe('LemonSlice as a pipeline', () => {
  test('it is listed, and its avatar joins the room for the agent, animated from the identity’s photo', async () => {
    const pipelines = (await (await account.call('GET', '/v1/pipelines')).json()) as Array<{ pipeline_id: string; renders: { kind: string; provider: string | null } }>;
    expect(pipelines.find((p) => p.pipeline_id === 'lemonslice')?.renders).toMatchObject({ kind: 'avatar_service', provider: 'lemonslice' });
    const identity = await lemonsliceIdentity();
    // Trained as the built-in face is (its fallback when LemonSlice fails): the rig is stored.
    const keys = await service.assetKeys();
    expect(keys.some((key) => key.includes(identity.identity_id) && key.endsWith('portrait.rig.json'))).toBe(true);
    const session = await start(identity.identity_id);
    const visitor = await joinAsVisitor(session);
    try {
      // The plugin called LemonSlice's API with the key, a LiveKit transport and the URL of the
      // photo's rendition (the dispatch's image_url), which LemonSlice could fetch.
      const call = await eventually(() => lemonslice.requests.at(-1), 20_000, 'the LemonSlice API call');
      expect(call.apiKey).toBe(lemonslice.apiKey);
      expect(call.body.transport_type).toBe('livekit');
      expect(call.body.agent_image_url).toBe(identity.image.replace(/image\.\w+$/, 'render.png'));
      expect(call.imageFetched).toBe(true);

      const avatarSession = await eventually(() => lemonslice.sessions.find((s) => s.request.roomName === session.room_name), 20_000, 'the avatar in the room');
      const participants = () => [...visitor.room.remoteParticipants.values()];
      const agent = await eventually(() => participants().find((p) => p.identity === avatarSession.request.agentIdentity), 20_000, 'the agent');
      const avatar = await eventually(() => participants().find((p) => p.identity === avatarSession.request.avatarIdentity && p.trackPublications.size >= 2), 20_000, 'the avatar with its tracks');
      expect(agent.kind).toBe(ParticipantKind.AGENT);
      expect(avatar.attributes['lk.publish_on_behalf']).toBe(agent.identity);
      expect([...avatar.trackPublications.values()].map((t) => (t.kind === TrackKind.KIND_AUDIO ? 'audio' : 'video')).sort()).toEqual(['audio', 'video']);
      // The agent publishes no voice of its own, and streams its greeting at LemonSlice's 16 kHz.
      expect(agent.trackPublications.size).toBe(0);
      const greeting = await eventually(() => avatarSession.segments.find((s) => s.finished), 20_000, 'the greeting to play out');
      expect(greeting.from).toBe(agent.identity);
      expect(greeting.attributes).toMatchObject({ sample_rate: '16000', num_channels: '1' });
      expect(greeting.finished).toMatchObject({ interrupted: false });
    } finally {
      await account.call('POST', `/v1/sessions/${session.room_name}/end`);
      await visitor.leave().catch(() => undefined);
    }
  }, 90_000);

  test('LemonSlice down: the session goes on with our own face, drawn and published by the agent', async () => {
    const identity = await lemonsliceIdentity();
    lemonslice.failWith = 503;
    const session = await start(identity.identity_id);
    const visitor = await joinAsVisitor(session);
    try {
      const agent = await eventually(() => visitor.agent(), 20_000, 'the agent');
      await eventually(() => agent.trackPublications.size >= 2, 20_000, 'the agent’s tracks');
      expect([...agent.trackPublications.values()].map((p) => p.name).sort()).toEqual(['avatar', 'avatar_audio']);
      expect(lemonslice.requests.at(-1)?.body.agent_image_url).toBe(identity.image.replace(/image\.\w+$/, 'render.png'));
      // The session's record says what streamed, and why: the talking head, LemonSlice refused.
      const fallback = { pipeline_id: 'lemonslice', fallback: 'builtin', reason: expect.stringContaining('LemonSlice') };
      await eventually(async () => ((await (await account.call('GET', `/v1/sessions/${session.room_name}`)).json()) as { avatar_fallback: unknown }).avatar_fallback, 10_000, 'the fallback in the session');
      const read = (await (await account.call('GET', `/v1/sessions/${session.room_name}`)).json()) as { avatar_fallback: unknown };
      expect(read.avatar_fallback).toEqual(fallback);
      const ended = (await (await account.call('POST', `/v1/sessions/${session.room_name}/end`)).json()) as { metadata: { avatar_fallback: unknown } };
      expect(ended.metadata.avatar_fallback).toEqual(fallback);
    } finally {
      lemonslice.failWith = null;
      await account.call('POST', `/v1/sessions/${session.room_name}/end`);
      await visitor.leave().catch(() => undefined);
    }
  }, 60_000);
});
