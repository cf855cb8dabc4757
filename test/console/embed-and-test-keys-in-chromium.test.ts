// Test keys and the Embed page in real headless Chromium (issue 34): the Keys page makes a test
// key (`lk_test_…`, badged, said so in the box that shows it once) that indeed sees only test
// resources; the Embed page makes a publishable key for a ready identity from two origins, lists
// it with the identity's name and both snippets, edits a limit, shows a refused origin's reason
// at its field, and revokes the key (listed as revoked, its snippets gone). What the page shows
// is checked against the API. `UPDATE_SCREENSHOTS=1` writes docs/console/embed.png.
import { beforeAll, describe, expect, test } from 'bun:test';
import { DEFAULT_PUBLISHABLE_KEY_LIMITS } from '../../src/publishable-keys/contract.ts';
import { identityForm } from '../support/forms.ts';
import { consoleInChromium, screenshot, usability } from './support.ts';

interface PublishableKeyBody {
  publishable_key_id: string;
  publishable_key: string;
  name: string | null;
  allowed_origins: string[];
  identity_ids: string[];
  limits: typeof DEFAULT_PUBLISHABLE_KEY_LIMITS;
  revoked_at: string | null;
}

describe('test keys and the Embed page in Chromium', () => {
  // An identity costs credits.
  const suite = consoleInChromium({ email: 'piet@example.com', service: { env: { CONSOLE_STARTER_CREDITS: '1000' } } });
  let identityId = '';
  let secondId = '';

  beforeAll(async () => {
    const { service, apiKey } = suite;
    const created = await fetch(`${service.url}/v1/identities`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}` },
      body: await identityForm({ name: 'Ada' }),
    });
    expect(created.status).toBe(200);
    const identity = (await created.json()) as { identity_id: string; status: string };
    expect(identity.status).toBe('ready');
    identityId = identity.identity_id;
    const second = await fetch(`${service.url}/v1/identities`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}` },
      body: await identityForm({ name: 'Ben' }),
    });
    expect(second.status).toBe(200);
    secondId = ((await second.json()) as { identity_id: string }).identity_id;
  }, 60_000);

  test('keys: a test key is made with the checkbox, said to be one when shown once, badged in the list, and sees only test resources', async () => {
    const { page } = suite.visitor;
    await page.goto('/console#/keys');
    await page.waitForSelector('#keys-table tr[data-key-id]');
    expect(await page.textContent('#key-test-hint')).toContain('cost nothing');
    await page.fill('#key-name', 'Staging');
    await page.check('#key-test');
    await page.click('#create-key');
    const testKey = (await (await page.waitForSelector('#api-key-once')).textContent())!.trim();
    expect(testKey).toMatch(/^lk_test_[0-9A-Za-z]{43}$/);
    expect(await page.textContent('#api-key-once-test')).toContain('This is a test key');
    expect(await page.isChecked('#key-test')).toBe(false); // the next key is live unless asked again
    await page.click('#continue');
    await page.waitForSelector('#api-key-once', { state: 'detached' });

    const testRow = page.locator('#keys-table tr[data-test=true]');
    expect(await testRow.count()).toBe(1);
    expect(await testRow.locator('td[data-label=Name]').textContent()).toBe('Staging Test');
    expect(await testRow.locator('[data-testid=test-key-badge]').isVisible()).toBe(true);
    expect(await testRow.locator('td[data-label=Key]').textContent()).toBe(`${testKey.slice(0, 12)}…`);
    // The sign-up's key is live: no badge.
    const liveRow = page.locator('#keys-table tr[data-test=false]');
    expect(await liveRow.count()).toBe(1);
    expect(await liveRow.locator('[data-testid=test-key-badge]').count()).toBe(0);

    // It is a real test key: it sees none of the live account's identities.
    expect(await suite.read<unknown[]>('/v1/identities', testKey)).toEqual([]);
    expect((await suite.read<{ identity_id: string }[]>('/v1/identities')).map((i) => i.identity_id).sort()).toEqual(
      [identityId, secondId].sort(),
    );
    expect(await usability(page)).toEqual({ unlabelled: [], overflow: 0 });
  }, 60_000);

  test('embed: make a publishable key for two origins, see it with its snippets, edit a limit, see a refused origin at its field, revoke it', async () => {
    const { page } = suite.visitor;
    await page.goto('/console#/embed');
    await page.waitForSelector('#publishable-key-form');
    await page.waitForSelector('#publishable-keys-list:has-text("No publishable keys yet.")');
    // The defaults shown are the server's.
    for (const [name, value] of Object.entries(DEFAULT_PUBLISHABLE_KEY_LIMITS))
      expect(await page.getAttribute(`#publishable-key-${name.replace(/_/g, '-')}`, 'placeholder')).toBe(String(value));
    expect(await page.locator('#publishable-key-identities input[type=checkbox]').count()).toBe(2);

    await page.fill('#publishable-key-name', 'Shop website');
    await page.fill('#publishable-key-origins', 'https://shop.example\n  https://www.shop.example  \n');
    await page.check(`#publishable-key-identity-${identityId}`);
    await page.click('#create-publishable-key');
    const row = page.locator('#publishable-keys-table tr[data-publishable-key-id]');
    await row.waitFor();
    const [made] = await suite.read<PublishableKeyBody[]>('/v1/publishable-keys');
    expect(made).toMatchObject({
      name: 'Shop website',
      allowed_origins: ['https://shop.example', 'https://www.shop.example'],
      identity_ids: [identityId],
      limits: DEFAULT_PUBLISHABLE_KEY_LIMITS,
      revoked_at: null,
    });
    const key = made!.publishable_key;
    expect(key).toMatch(/^lk_pub_/);
    expect(await row.getAttribute('data-publishable-key-id')).toBe(made!.publishable_key_id);
    expect(await row.locator('[data-testid=publishable-key]').textContent()).toBe(key);
    expect(await row.locator('td[data-label=Origins]').textContent()).toBe(
      'https://shop.examplehttps://www.shop.example',
    );
    expect(await row.locator('td[data-label=Identities]').textContent()).toBe('Ada');
    expect(await row.locator('td[data-label=Limits]').textContent()).toContain('10 a minute, 5 at once');
    expect(await row.locator('td[data-label="Last used"]').textContent()).toBe('Never');
    // The form starts over for the next key.
    expect(await page.inputValue('#publishable-key-origins')).toBe('');

    // Both snippets, pointing at this service, with the key and the identity.
    const origin = new URL(suite.service.url).origin;
    const snippet = page.locator(`section[data-testid=snippet][data-publishable-key-id="${made!.publishable_key_id}"]`);
    expect(await snippet.locator('[data-testid=element-snippet]').textContent()).toBe(
      `<script src="${origin}/embed.js" async></script>\n<likeness-avatar publishable-key="${key}" identity="${identityId}"></likeness-avatar>`,
    );
    const frame = (await snippet.locator('[data-testid=iframe-snippet]').textContent())!;
    expect(frame).toStartWith(`<iframe src="${origin}/embed/frame?key=${key}&identity=${identityId}" `);
    expect(frame).toContain('allow="microphone; camera; autoplay"');
    expect(frame).toContain('title="Talk with Ada"');
    expect(await usability(page)).toEqual({ unlabelled: [], overflow: 0 });
    await screenshot(page, 'embed');

    // Edit a limit and add the second identity: the rest stay.
    await row.locator('[data-testid=edit-publishable-key]').click();
    await page.waitForSelector('#edit-publishable-key-form');
    expect(await page.inputValue('#edit-publishable-key-origins')).toBe(
      'https://shop.example\nhttps://www.shop.example',
    );
    expect(await page.isChecked(`#edit-publishable-key-identity-${identityId}`)).toBe(true);
    expect(await page.isChecked(`#edit-publishable-key-identity-${secondId}`)).toBe(false);
    expect(await page.inputValue('#edit-publishable-key-sessions-per-minute')).toBe('10');
    await page.fill('#edit-publishable-key-sessions-per-minute', '25');
    await page.check(`#edit-publishable-key-identity-${secondId}`);
    await page.click('#save-publishable-key');
    await page.waitForSelector('#edit-publishable-key-form', { state: 'detached' });
    await page.waitForSelector('#publishable-keys-table td[data-label=Limits]:has-text("25 a minute")');
    const [edited] = await suite.read<PublishableKeyBody[]>('/v1/publishable-keys');
    expect(edited).toMatchObject({
      allowed_origins: made!.allowed_origins,
      identity_ids: [identityId, secondId],
      limits: { ...DEFAULT_PUBLISHABLE_KEY_LIMITS, sessions_per_minute: 25 },
    });
    expect(await row.locator('td[data-label=Identities]').textContent()).toBe('AdaBen');
    // With two identities, the snippets follow the one chosen.
    await page.selectOption(`#snippet-identity-${made!.publishable_key_id}`, secondId);
    expect(await snippet.locator('[data-testid=element-snippet]').textContent()).toContain(
      `publishable-key="${key}" identity="${secondId}"`,
    );
    const secondFrame = (await snippet.locator('[data-testid=iframe-snippet]').textContent())!;
    expect(secondFrame).toContain(`key=${key}&identity=${secondId}" allow="microphone; camera; autoplay"`);
    expect(secondFrame).toContain('title="Talk with Ben"');
    expect(await usability(page)).toEqual({ unlabelled: [], overflow: 0 });

    // An origin with a path is refused: the server's reason is at the field and in the form's box
    // (Chromium logs the 422 it was answered with: the one console error this page may have).
    const logged = suite.visitor.errors.length;
    await page.fill('#publishable-key-origins', 'https://shop.example/path');
    await page.check(`#publishable-key-identity-${identityId}`);
    await page.click('#create-publishable-key');
    await page.waitForSelector('#publishable-key-origins-error');
    expect(await page.textContent('#publishable-key-origins-error')).toContain(
      '"https://shop.example/path" is not an origin',
    );
    expect(await page.getAttribute('#publishable-key-origins', 'aria-invalid')).toBe('true');
    expect(await page.isVisible('#publishable-key-form-error')).toBe(true);
    expect(await suite.read<unknown[]>('/v1/publishable-keys')).toHaveLength(1);
    expect(suite.visitor.errors.slice(logged).every((line) => line.includes('422'))).toBe(true);

    // Revoke, after the confirmation (Cancel first keeps it).
    await row.locator('[data-testid=revoke-publishable-key]').click();
    await page.click('#confirm-cancel');
    expect(await row.getAttribute('data-revoked')).toBe('false');
    await row.locator('[data-testid=revoke-publishable-key]').click();
    expect(await page.textContent('#confirm-message')).toContain(key);
    await page.click('#confirm-accept');
    await page.waitForSelector('#publishable-keys-table tr[data-revoked=true]');
    expect(await row.locator('td[data-label=Revoked]').textContent()).toStartWith('Revoked ');
    expect(await row.locator('[data-testid=revoke-publishable-key]').count()).toBe(0);
    expect(await snippet.count()).toBe(0);
    const [revoked] = await suite.read<PublishableKeyBody[]>('/v1/publishable-keys');
    expect(revoked!.revoked_at).not.toBeNull();
    expect(suite.visitor.errors.slice(0, logged).filter((e) => !/status of 401 \(Unauthorized\)/.test(e))).toEqual([]);
  }, 60_000);
});
