// Instant voice cloning at onboarding and retraining, against the wire-level ElevenLabs fake: the
// fake receives the sample bytes; the identity stores the fake's voice id; replaced and deleted
// clones are deleted at the provider; a provider failure is a 502 that leaves nothing behind.
import { describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { accounts } from '../../src/accounts/schema.ts';
import * as fx from '../fixtures/index.ts';
import { file, form, type IdentityBody, identityForm } from '../support/forms.ts';
import { ENGINES, startTestService, type TestAccount } from '../support/service.ts';
import { eventually } from '../support/visitor.ts';
import { storedRow, suiteWithElevenLabs, waitUntilReady } from './support.ts';

type Identity = IdentityBody & { voice_id: string | null };

describe.each(ENGINES)('voice cloning with ElevenLabs on %s', (engine) => {
  const suite = suiteWithElevenLabs(engine, { env: { CREDITS_ONBOARDING: '50' } });

  const createOk = async (fields: Parameters<typeof identityForm>[0]) => {
    const response = await suite.account.call('POST', '/v1/identities', { body: await identityForm(fields) });
    expect(response.status).toBe(200);
    return (await response.json()) as Identity;
  };
  const snapshot = async (who: TestAccount) => ({
    identities: await suite.service.count('identities'),
    ledger: await suite.service.count('credit_ledger'),
    files: await suite.service.assetKeys(),
    balance: await suite.service.services.ledger.balance(who.accountId),
    liveVoices: [...suite.fake.voices.keys()].sort(),
  });

  test('the uploaded sample is cloned: the fake got its bytes, the identity keeps the fake’s voice id', async () => {
    const bytes = await fx.mp3({ seconds: 12 });
    const identity = await createOk({ name: 'Grace', audio: file(bytes, 'grace.mp3', 'audio/mpeg') });
    const clone = suite.fake.received.clones.at(-1)!;
    expect(clone.apiKey).toBe('xi-secret');
    expect(clone.files).toHaveLength(1);
    expect(clone.files[0]!.bytes).toEqual(bytes);
    expect(clone.files[0]!.type).toBe('audio/mpeg');
    expect(clone.name).toContain('Grace');
    expect(clone.name).toContain(identity.identity_id);
    expect(identity.voice_id).toBeNull();
    const voice = (await storedRow(suite.service, identity.identity_id))!.voice!;
    expect(voice).toMatchObject({ presetId: null, multilingual: true, elevenlabsVoiceId: clone.voiceId });
    expect(voice.profile.pitchHz).toBeGreaterThan(0); // measured as well, for the offline fallback
    expect(suite.fake.voices.has(clone.voiceId)).toBe(true);
  });

  test('a preset is never cloned', async () => {
    const clones = suite.fake.received.clones.length;
    const identity = await createOk({ voice_id: 'adam' });
    expect(suite.fake.received.clones.length).toBe(clones);
    expect((await storedRow(suite.service, identity.identity_id))!.voice!.elevenlabsVoiceId).toBe(
      'pNInz6obpgDQGcFmaJgB',
    );
    expect((await suite.account.call('DELETE', `/v1/identities/${identity.identity_id}`)).status).toBe(204);
    expect(suite.fake.received.deletions).not.toContain('pNInz6obpgDQGcFmaJgB'); // a shared premade voice
  });

  test('DELETE of the identity deletes its clone at ElevenLabs', async () => {
    const identity = await createOk({ audio: file(fx.wav({ seconds: 6 }), 'v.wav') });
    const voiceId = (await storedRow(suite.service, identity.identity_id))!.voice!.elevenlabsVoiceId!;
    expect((await suite.account.call('DELETE', `/v1/identities/${identity.identity_id}`)).status).toBe(204);
    expect(suite.fake.received.deletions).toContain(voiceId);
    expect(suite.fake.voices.has(voiceId)).toBe(false);
  });

  test('a provider failure answers 502 {detail} and leaves nothing: no row, file, charge or voice', async () => {
    const before = await snapshot(suite.account);
    suite.fake.cloneFailure = {
      status: 400,
      message: 'voice_limit_reached: you have reached your maximum amount of custom voices',
    };
    try {
      const response = await suite.account.call('POST', '/v1/identities', {
        body: await identityForm({ audio: file(fx.wav({ seconds: 6 }), 'v.wav') }),
      });
      expect(response.status).toBe(502);
      const body = (await response.json()) as { detail: unknown };
      expect(typeof body.detail).toBe('string');
      expect(body.detail as string).toContain('ElevenLabs');
      expect(body.detail as string).toContain('maximum amount of custom voices');
    } finally {
      suite.fake.cloneFailure = null;
    }
    expect(await snapshot(suite.account)).toEqual(before);
  });

  test('an unreachable provider is a 502 too', async () => {
    const down = await startTestService(engine, {
      env: { ELEVENLABS_API_KEY: 'k', ELEVENLABS_BASE_URL: 'http://127.0.0.1:9/v1' },
    });
    try {
      const payer = await down.account({ credits: 100 });
      const response = await payer.call('POST', '/v1/identities', {
        body: await identityForm({ audio: file(fx.wav({ seconds: 6 }), 'v.wav') }),
      });
      expect(response.status).toBe(502);
      expect(await down.count('identities')).toBe(0);
      expect(await down.assetKeys()).toEqual([]);
      expect(await down.services.ledger.balance(payer.accountId)).toBe(100);
    } finally {
      await down.stop();
    }
  });

  test('when onboarding fails after the clone (credits gone meanwhile), the clone is deleted too', async () => {
    const payer = await suite.service.account({ credits: 50 });
    const before = await snapshot(payer);
    suite.fake.onClone = async () => {
      await suite.service.services.database.db
        .update(accounts)
        .set({ balance: 0 })
        .where(eq(accounts.id, payer.accountId));
    };
    try {
      const response = await payer.call('POST', '/v1/identities', {
        body: await identityForm({ audio: file(fx.wav({ seconds: 6 }), 'v.wav') }),
      });
      expect(response.status).toBe(402);
    } finally {
      suite.fake.onClone = null;
    }
    const clone = suite.fake.received.clones.at(-1)!;
    expect(suite.fake.received.deletions).toContain(clone.voiceId);
    expect(await snapshot(payer)).toEqual({ ...before, balance: 0 });
  });

  test('PATCH audio clones the new sample in the retrain and deletes the old clone', async () => {
    const identity = await createOk({ audio: file(fx.wav({ seconds: 6 }), 'a.wav') });
    const oldVoice = (await storedRow(suite.service, identity.identity_id))!.voice!.elevenlabsVoiceId!;
    const newBytes = await fx.m4a({ seconds: 9 });
    const response = await suite.account.call('PATCH', `/v1/identities/${identity.identity_id}`, {
      body: form({ prompt: 'New prompt', audio: file(newBytes, 'b.m4a') }),
    });
    expect(response.status).toBe(202);
    await waitUntilReady(suite.account, identity.identity_id);
    const clone = suite.fake.received.clones.at(-1)!;
    expect(clone.files[0]!.bytes).toEqual(newBytes);
    const row = (await storedRow(suite.service, identity.identity_id))!;
    expect(row.voice!.elevenlabsVoiceId).toBe(clone.voiceId);
    expect(row.pendingRetrain).toBeNull();
    expect(row.detail).toBeNull();
    // The old clone is released after the retrain commits, so a moment after the identity reads ready.
    await eventually(() => suite.fake.received.deletions.includes(oldVoice), 5_000, 'the old clone deleted');
    expect(suite.fake.voices.has(clone.voiceId)).toBe(true);
  });

  test('a clone failure in a retrain keeps the previous voice and says why', async () => {
    const identity = await createOk({ audio: file(fx.wav({ seconds: 6 }), 'a.wav') });
    const before = await storedRow(suite.service, identity.identity_id);
    suite.fake.cloneFailure = { status: 500, message: 'internal error' };
    try {
      const response = await suite.account.call('PATCH', `/v1/identities/${identity.identity_id}`, {
        body: form({ prompt: 'p', audio: file(fx.wav({ seconds: 7 }), 'b.wav') }),
      });
      expect(response.status).toBe(202);
      const status = await waitUntilReady(suite.account, identity.identity_id);
      expect(status.detail).toContain('ElevenLabs answered 500');
    } finally {
      suite.fake.cloneFailure = null;
    }
    const after = (await storedRow(suite.service, identity.identity_id))!;
    expect(after.voice).toEqual(before!.voice);
    expect(after.audio).toEqual(before!.audio);
    expect(suite.fake.voices.has(before!.voice!.elevenlabsVoiceId!)).toBe(true);
  });

  test('PATCH voice_id replaces the clone with the preset and deletes the clone at ElevenLabs', async () => {
    const identity = await createOk({ audio: file(fx.wav({ seconds: 6 }), 'a.wav') });
    const cloned = (await storedRow(suite.service, identity.identity_id))!.voice!.elevenlabsVoiceId!;
    const response = await suite.account.call('PATCH', `/v1/identities/${identity.identity_id}`, {
      body: form({ voice_id: 'aria' }),
    });
    expect(response.status).toBe(200);
    expect(suite.fake.received.deletions).toContain(cloned);
    expect((await storedRow(suite.service, identity.identity_id))!.voice!.elevenlabsVoiceId).toBe(
      '9BWtsMINqrJLrRacOk9x',
    );
  });
});
