// A cloned voice a running session speaks with outlives its identity (deleted, or given a
// preset voice) until that session ends; then it is deleted at ElevenLabs. Real LiveKit rooms
// (no agent: a session runs until it is ended), the wire-level ElevenLabs fake.
import { describe, expect, test } from 'bun:test';
import { voiceReleases } from '../../src/voices/schema.ts';
import * as fx from '../fixtures/index.ts';
import { file, form, identityForm } from '../support/forms.ts';
import { ENGINES } from '../support/service.ts';
import { eventually } from '../support/visitor.ts';
import { storedRow, suiteWithElevenLabs } from './support.ts';

describe.each(ENGINES)('releasing cloned voices in use on %s', (engine) => {
  const suite = suiteWithElevenLabs(engine, {
    livekit: 'local',
    env: { CREDITS_ONBOARDING: '0', SESSION_SWEEP_INTERVAL_SECONDS: '1' },
  });

  const clonedIdentity = async () => {
    const response = await suite.account.call('POST', '/v1/identities', {
      body: await identityForm({ audio: file(fx.wav({ seconds: 6 }), 'v.wav') }),
    });
    expect(response.status).toBe(200);
    const { identity_id } = (await response.json()) as { identity_id: string };
    return {
      identityId: identity_id,
      voiceId: (await storedRow(suite.service, identity_id))!.voice!.elevenlabsVoiceId!,
    };
  };
  const startSession = async (identityId: string) => {
    const response = await suite.account.call('POST', '/v1/sessions/start', {
      body: JSON.stringify({ identity_id: identityId, language: 'en' }),
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { room_name: string }).room_name;
  };
  const pending = async () =>
    (await suite.service.services.database.db.select().from(voiceReleases)).map((r) => r.elevenlabsVoiceId);

  test('DELETE during a session keeps the clone until the session ends, then deletes it', async () => {
    const { identityId, voiceId } = await clonedIdentity();
    const session = await startSession(identityId);
    expect((await suite.account.call('DELETE', `/v1/identities/${identityId}`)).status).toBe(204);
    expect(suite.fake.voices.has(voiceId)).toBe(true);
    expect(await pending()).toContain(voiceId);
    expect((await suite.account.call('POST', `/v1/sessions/${session}/end`)).status).toBe(200);
    await eventually(() => !suite.fake.voices.has(voiceId), 10_000, 'the clone deleted at ElevenLabs');
    expect(suite.fake.received.deletions.filter((id) => id === voiceId)).toEqual([voiceId]);
    expect(await pending()).not.toContain(voiceId);
  });

  test('a preset replacing the clone during two sessions: deleted only after the second ends', async () => {
    const { identityId, voiceId } = await clonedIdentity();
    const first = await startSession(identityId);
    const second = await startSession(identityId);
    const patched = await suite.account.call('PATCH', `/v1/identities/${identityId}`, {
      body: form({ voice_id: 'aria' }),
    });
    expect(patched.status).toBe(200);
    expect((await suite.account.call('POST', `/v1/sessions/${first}/end`)).status).toBe(200);
    // The sweeper runs every second: give it a few turns.
    await Bun.sleep(2_500);
    expect(suite.fake.voices.has(voiceId)).toBe(true);
    expect((await suite.account.call('POST', `/v1/sessions/${second}/end`)).status).toBe(200);
    await eventually(() => !suite.fake.voices.has(voiceId), 10_000, 'the clone deleted at ElevenLabs');
  });

  test('with no session speaking with it, the clone is deleted at once', async () => {
    const { identityId, voiceId } = await clonedIdentity();
    const other = await clonedIdentity();
    const session = await startSession(other.identityId);
    expect((await suite.account.call('DELETE', `/v1/identities/${identityId}`)).status).toBe(204);
    expect(suite.fake.voices.has(voiceId)).toBe(false);
    expect(await pending()).not.toContain(voiceId);
    await suite.account.call('POST', `/v1/sessions/${session}/end`);
  });
});
