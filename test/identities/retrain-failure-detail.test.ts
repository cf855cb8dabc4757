// A failed retrain's `detail` (issue 16): what the owner can fix or wait for, never the
// service's internals (those go to the log). The identity stays ready on its previous media.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ApiError } from '../../src/http/errors.ts';
import { retrainFailure } from '../../src/identities/retraining.ts';
import { MediaError } from '../../src/media/index.ts';
import { VoiceProviderError } from '../../src/voices/index.ts';
import * as fx from '../fixtures/index.ts';
import { storeLosingUploads } from '../support/fakes/asset-store.ts';
import { file, type IdentityBody, identityForm } from '../support/forms.ts';
import { startTestService, type TestService, waitForStatus } from '../support/service.ts';

describe('a failed retrain’s detail', () => {
  test('says what to fix, or whom to wait for; an internal fault says only that it was ours', () => {
    const media = retrainFailure(new MediaError(422, 'image', 'no face was found in the image', 'image.no_face'));
    expect(media).toBe(
      'Retraining failed: image: no face was found in the image; the previous photo and voice are still in use',
    );
    expect(retrainFailure(new VoiceProviderError('ElevenLabs answered 503: {"detail":"overloaded"}'))).toContain(
      'a provider did not answer',
    );
    expect(
      retrainFailure(
        new ApiError(502, 'Anam could not make an avatar from the photo (HTTP 500); nothing was kept or charged'),
      ),
    ).toContain('Anam could not make an avatar from the photo (HTTP 500)');
    const internal = retrainFailure(new Error('ENOENT: /var/lib/likeness/assets/identities/idn_x/upload.png'));
    expect(internal).not.toContain('ENOENT');
    expect(internal).not.toContain('/var/lib');
    expect(internal).toContain("on the service's side");
  });

  let service: TestService;
  // Loses the retrain's stored upload when told to: a fault of ours, not the owner's.
  let uploads: Awaited<ReturnType<typeof storeLosingUploads>>;
  beforeAll(async () => {
    uploads = await storeLosingUploads();
    service = await startTestService('pglite', { overrides: { store: uploads.store } });
  });
  afterAll(() => service.stop());

  test('through the API: the identity is ready on its previous photo, and the detail names no internals', async () => {
    const account = await service.account({ credits: 1000 });
    const created = (await (
      await account.call('POST', '/v1/identities', { body: await identityForm({ language: 'en' }) })
    ).json()) as IdentityBody;
    uploads.losing = true;
    try {
      const form = await identityForm({ prompt: 'Again.', image: file(fx.portraitPng(), 'new.png') });
      form.delete('name');
      expect((await account.call('PATCH', `/v1/identities/${created.identity_id}`, { body: form })).status).toBe(202);
      await waitForStatus(account, created.identity_id, 'ready');
    } finally {
      uploads.losing = false;
    }
    const after = (await (await account.call('GET', `/v1/identities/${created.identity_id}`)).json()) as IdentityBody;
    expect(after.image).toBe(created.image);
    expect(after.detail).toBe(
      "Retraining failed on the service's side; the previous photo and voice are still in use. Try again; if it fails again, tell the service's operator",
    );
  }, 60_000);
});
