// Bad voice choices answer 422 in the error shape (docs/api.md#errors) and lose nothing: no identity, file or charge
// on create; no change to the identity on PATCH.
import { describe, expect, test } from 'bun:test';
import * as fx from '../fixtures/index.ts';
import { type FormFields, file, form, type IdentityBody, identityForm } from '../support/forms.ts';
import { ENGINES } from '../support/service.ts';
import { storedState } from '../support/stored-state.ts';
import { suiteServiceWithAccount } from '../support/suite-service.ts';
import { storedRow } from './support.ts';

const sample = () => file(fx.wav({ seconds: 6 }), 'v.wav', 'audio/wav');
/** Five seconds of digital silence: decodes fine, but there is no voice to clone. */
const silentWav = () =>
  file(
    fx.wav({ seconds: 5 }).map((byte, i) => (i < 44 ? byte : 0)),
    'silent.wav',
    'audio/wav',
  );

const CASES: { name: string; fields: () => FormFields; loc: (string | number)[]; type: string }[] = [
  {
    name: 'an unknown voice_id',
    fields: () => ({ voice_id: 'nobody' }),
    loc: ['body', 'voice_id'],
    type: 'unknown_voice',
  },
  {
    name: 'a voice_id in the wrong case',
    fields: () => ({ voice_id: 'Aria' }),
    loc: ['body', 'voice_id'],
    type: 'unknown_voice',
  },
  {
    name: 'an ElevenLabs id instead of ours',
    fields: () => ({ voice_id: '9BWtsMINqrJLrRacOk9x' }),
    loc: ['body', 'voice_id'],
    type: 'unknown_voice',
  },
  { name: 'an empty voice_id', fields: () => ({ voice_id: '' }), loc: ['body', 'voice_id'], type: 'string_too_short' },
  {
    name: 'both audio and voice_id',
    fields: () => ({ voice_id: 'aria', audio: sample() }),
    loc: ['body', 'voice_id'],
    type: 'voice_conflict',
  },
  {
    name: 'voice_id sent as a file',
    fields: () => ({ voice_id: file(new TextEncoder().encode('aria'), 'v.txt') }),
    loc: ['body', 'voice_id'],
    type: 'string_type',
  },
  { name: 'a silent sample', fields: () => ({ audio: silentWav() }), loc: ['body', 'audio'], type: 'audio.no_speech' },
];

describe.each(ENGINES)('bad voice input on %s', (engine) => {
  const suite = suiteServiceWithAccount(engine, { credits: 1000 });
  const snapshot = () => storedState(suite.service, suite.account);

  for (const c of CASES) {
    test(`create with ${c.name} → 422 at ${c.loc.join('.')}, nothing stored or charged`, async () => {
      const before = await snapshot();
      const response = await suite.account.call('POST', '/v1/identities', { body: await identityForm(c.fields()) });
      expect(response.status).toBe(422);
      const problems = ((await response.json()) as { detail: { loc: unknown[]; msg: string; type: string }[] }).detail;
      expect(problems).toContainEqual({ loc: c.loc, msg: expect.any(String), type: c.type });
      expect(await snapshot()).toEqual(before);
    });
  }

  test('PATCH with an unknown voice or with audio and voice_id → 422, the identity unchanged', async () => {
    const created = (await (
      await suite.account.call('POST', '/v1/identities', { body: await identityForm({ audio: sample() }) })
    ).json()) as IdentityBody;
    const rowBefore = await storedRow(suite.service, created.identity_id);
    const before = await snapshot();
    const attempts: [FormFields, string][] = [
      [{ voice_id: 'nobody' }, 'unknown_voice'],
      [{ voice_id: 'nobody', name: 'Renamed' }, 'unknown_voice'],
      [{ voice_id: 'aria', prompt: 'p', audio: sample() }, 'voice_conflict'],
      [{ prompt: 'p', audio: silentWav() }, 'audio.no_speech'],
    ];
    for (const [fields, type] of attempts) {
      const response = await suite.account.call('PATCH', `/v1/identities/${created.identity_id}`, {
        body: form(fields),
      });
      expect(response.status).toBe(422);
      expect(((await response.json()) as any).detail.map((p: { type: string }) => p.type)).toContain(type);
    }
    expect(await snapshot()).toEqual(before);
    expect(await storedRow(suite.service, created.identity_id)).toEqual(rowBefore!);
    expect(
      ((await (await suite.account.call('GET', `/v1/identities/${created.identity_id}`)).json()) as IdentityBody).name,
    ).toBe('Ada');
  });
});
