// Links to a person's face and voice expire and are signed (issue 16): made afresh on every
// read of the identity, served only while valid, and dead at once when the identity is
// deleted or a retrain replaces the file. Nothing caches the bytes on the way.
import { describe, expect, test } from 'bun:test';
import { AssetLinks } from '../../src/assets/links.ts';
import * as fx from '../fixtures/index.ts';
import { file, type IdentityBody, identityForm } from '../support/forms.ts';
import { suiteServiceWithAccount } from '../support/suite-service.ts';

describe('AssetLinks', () => {
  test('a link lives between one and two lifetimes; a forged, altered or expired one does not hold', () => {
    let now = Date.UTC(2026, 10, 24, 12, 0, 0);
    const links = new AssetLinks('https://likeness.test/assets', 'secret', 3600, () => now);
    const url = new URL(links.url('identities/idn_a/t/image.jpg'));
    expect(url.pathname).toBe('/assets/identities/idn_a/t/image.jpg');
    const expires = url.searchParams.get('expires')!;
    const signature = url.searchParams.get('signature')!;
    const left = links.secondsLeft('identities/idn_a/t/image.jpg', expires, signature)!;
    expect(left).toBeGreaterThanOrEqual(3600);
    expect(left).toBeLessThanOrEqual(7200);
    // The same link for reads within one period (a browser may keep it).
    now += 60_000;
    expect(links.url('identities/idn_a/t/image.jpg')).toBe(url.toString());
    // Another key, another expiry, another secret: refused.
    expect(links.secondsLeft('identities/idn_b/t/image.jpg', expires, signature)).toBeUndefined();
    expect(
      links.secondsLeft('identities/idn_a/t/image.jpg', String(Number(expires) + 3600), signature),
    ).toBeUndefined();
    expect(
      new AssetLinks('https://likeness.test/assets', 'other', 3600, () => now).secondsLeft(
        'identities/idn_a/t/image.jpg',
        expires,
        signature,
      ),
    ).toBeUndefined();
    expect(links.secondsLeft('identities/idn_a/t/image.jpg', undefined, undefined)).toBeUndefined();
    // Past its expiry.
    now = Number(expires) * 1000 + 1;
    expect(links.secondsLeft('identities/idn_a/t/image.jpg', expires, signature)).toBeUndefined();
    // A session's job gets a longer one when asked.
    expect(Number(new URL(links.url('k', 4 * 3600)).searchParams.get('expires')) * 1000 - now).toBeGreaterThanOrEqual(
      4 * 3600 * 1000,
    );
  });
});

describe('links through the API', () => {
  const suite = suiteServiceWithAccount('pglite', { credits: 1000, env: { ASSET_URL_TTL: '600' } });

  const create = async () =>
    (await (
      await suite.account.call('POST', '/v1/identities', {
        body: await identityForm({ language: 'en', audio: file(fx.wav({ seconds: 5 }), 'v.wav') }),
      })
    ).json()) as IdentityBody;

  test('the identity’s links are signed and expire; without or with a broken signature the file is 404; no cache keeps it', async () => {
    const identity = await create();
    for (const link of [identity.image, identity.audio!]) {
      const url = new URL(link);
      const expires = Number(url.searchParams.get('expires'));
      expect(expires * 1000 - Date.now()).toBeGreaterThan(590_000);
      expect(expires * 1000 - Date.now()).toBeLessThanOrEqual(1_200_000);
      const served = await fetch(link);
      expect(served.status).toBe(200);
      expect(served.headers.get('cache-control')).toBe('private, no-store');
      expect((await fetch(`${url.origin}${url.pathname}`)).status).toBe(404);
      url.searchParams.set(
        'signature',
        url.searchParams.get('signature')!.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')),
      );
      expect((await fetch(url)).status).toBe(404);
    }
  });

  test('a link taken before a retrain or a delete answers 404 right after it', async () => {
    const identity = await create();
    const form = await identityForm({ prompt: 'Again.', image: file(fx.portraitPng(), 'new.png') });
    form.delete('name');
    expect((await suite.account.call('PATCH', `/v1/identities/${identity.identity_id}`, { body: form })).status).toBe(
      202,
    );
    await suite.service.services.retraining.idle();
    expect((await fetch(identity.image)).status).toBe(404);
    const current = (await (
      await suite.account.call('GET', `/v1/identities/${identity.identity_id}`)
    ).json()) as IdentityBody;
    expect((await fetch(current.image)).status).toBe(200);
    expect((await suite.account.call('DELETE', `/v1/identities/${identity.identity_id}`)).status).toBe(204);
    expect((await fetch(current.image)).status).toBe(404);
    expect((await fetch(current.audio!)).status).toBe(404);
  });
});
