// The language rule in the console, in real headless Chromium (docs/api.md#languages: every
// mode but English needs a multilingual voice, checked by the API only when a session starts).
// The create form defaults to what can talk and holds a choice that cannot before anything is
// charged; Talk offers only what the identity's voice speaks; a 422 reads as a sentence.
import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { form, identityForm } from '../support/forms.ts';
import { consoleInChromium } from './support.ts';

const ASTRONAUT = join(import.meta.dir, '../fixtures/astronaut.png');

describe('languages and voices in the console', () => {
  // No LiveKit: a refused start is answered before any room exists.
  const suite = consoleInChromium({
    email: 'lena@example.com',
    service: { env: { CONSOLE_STARTER_CREDITS: '1000' } },
    viewport: { width: 1280, height: 800 },
  });
  const api = (method: string, path: string, body?: BodyInit) =>
    fetch(`${suite.service.url}${path}`, { method, body, headers: { authorization: `Bearer ${suite.apiKey}` } });
  const json = async <T>(method: string, path: string, body?: BodyInit) =>
    (await (await api(method, path, body)).json()) as T;
  const balance = async () => (await json<{ balance: number }>('GET', '/v1/credits')).balance;
  const languageOf = (page: Page) => page.$eval('#identity-language', (select) => (select as HTMLSelectElement).value);

  test('the create form starts on English, follows the voice to Auto, and holds a language the voice cannot speak before any charge', async () => {
    const { page } = suite.visitor;
    const posted: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && new URL(request.url()).pathname === '/console/api/identities')
        posted.push(request.url());
    });
    await page.goto('/console#/identities');
    await page.waitForSelector('#identity-form');
    expect(await languageOf(page)).toBe('en');
    // The preset voices say which are multilingual (GET /v1/voices): adam is, roger is not.
    await page.selectOption('#identity-voice', 'adam');
    expect(await languageOf(page)).toBe('auto');
    await page.selectOption('#identity-voice', 'roger');
    expect(await languageOf(page)).toBe('en');
    await page.selectOption('#identity-voice', '');
    await page.setInputFiles('#identity-audio', {
      name: 'voice.wav',
      mimeType: 'audio/wav',
      buffer: Buffer.from('RIFF'),
    });
    expect(await languageOf(page)).toBe('auto');
    await page.setInputFiles('#identity-audio', []);
    expect(await languageOf(page)).toBe('en');
    expect(await page.isVisible('#identity-language-problem')).toBe(false);

    // Spanish with an English-only voice: said at the field, and Create waits.
    const before = await balance();
    await page.fill('#identity-name', 'Lena');
    await page.fill('#identity-prompt', 'You are Lena, a guide to Madrid.');
    await page.setInputFiles('#identity-image', ASTRONAUT);
    await page.selectOption('#identity-voice', 'roger');
    await page.selectOption('#identity-language', 'es');
    await page.waitForSelector('#identity-language-problem', { state: 'visible' });
    const problem = await page.textContent('#identity-language-problem');
    expect(problem).toContain('Spanish');
    expect(problem).toContain('multilingual');
    expect(problem).toContain('English');
    expect(await page.isDisabled('#create-identity')).toBe(true);
    expect(await page.getAttribute('#identity-language', 'aria-invalid')).toBe('true');
    // Enter in a text field submits nothing either.
    await page.press('#identity-name', 'Enter');
    await Bun.sleep(300);
    expect(posted).toEqual([]);
    expect(await balance()).toBe(before);

    // A multilingual voice makes it possible; the chosen Spanish stays chosen.
    await page.selectOption('#identity-voice', 'adam');
    expect(await page.isVisible('#identity-language-problem')).toBe(false);
    expect(await languageOf(page)).toBe('es');
    await page.click('#create-identity');
    await page.waitForSelector('li[data-testid=identity-card][data-status=ready]', { timeout: 30_000 });
    const [listed] = await json<{ identity_id: string }[]>('GET', '/v1/identities');
    expect(await json<Record<string, unknown>>('GET', `/v1/identities/${listed!.identity_id}`)).toMatchObject({
      name: 'Lena',
      language: 'es',
      voice_id: 'adam',
    });
    expect(posted.length).toBe(1);
    // The form starts over on English.
    await page.waitForFunction(
      () => (document.querySelector('#identity-language') as HTMLSelectElement).value === 'en',
    );
    expect(await page.isEnabled('#create-identity')).toBe(true);
  }, 60_000);

  test('Talk offers only English for an English-only voice, without nested parentheses', async () => {
    // Made through the API with its defaults: language auto, the default (English-only) voice.
    const created = await json<{ identity_id: string }>(
      'POST',
      '/v1/identities',
      await identityForm({ name: 'Default voice' }),
    );
    const { page } = suite.visitor;
    await page.goto(`/console#/talk?identity=${created.identity_id}`);
    await page.waitForSelector('#talk-language-note', { state: 'visible' });
    const options = await page.$$eval('#talk-language option', (all) =>
      all.map((o) => ({
        value: (o as HTMLOptionElement).value,
        label: o.textContent,
        disabled: (o as HTMLOptionElement).disabled,
      })),
    );
    expect(options[0]).toEqual({
      value: '',
      label: 'Identity default (Auto: follows the visitor) — needs a multilingual voice',
      disabled: true,
    });
    expect(options.filter((o) => !o.disabled).map((o) => o.value)).toEqual(['en']);
    expect(await page.$eval('#talk-language', (select) => (select as HTMLSelectElement).value)).toBe('en');
    expect(await page.textContent('#talk-language-note')).toContain('English only');
    // A multilingual identity offers every mode, its own first.
    await page.selectOption('#talk-identity', { label: 'Lena' });
    await page.waitForSelector('#talk-language-note', { state: 'hidden' });
    expect(await page.$eval('#talk-language option', (o) => o.textContent)).toBe('Identity default (Spanish)');
    expect(await page.$$eval('#talk-language option:disabled', (all) => all.length)).toBe(0);
  }, 30_000);

  test('a 422 on Start reads as a sentence that names what to change; no session starts', async () => {
    const { page } = suite.visitor;
    const [lena] = (await json<{ identity_id: string; name: string }[]>('GET', '/v1/identities')).filter(
      (identity) => identity.name === 'Lena',
    );
    await page.goto(`/console#/talk?identity=${lena!.identity_id}`);
    await page.waitForSelector('#talk-form');
    await page.waitForFunction(
      () => document.querySelector('#talk-language option')?.textContent === 'Identity default (Spanish)',
    );
    // Meanwhile the voice becomes English only (another tab, or the API): the page still offers Spanish.
    const changed = await api('PATCH', `/v1/identities/${lena!.identity_id}`, form({ voice_id: 'roger' }));
    expect(changed.status).toBe(200);
    await page.click('#start-talk');
    await page.waitForSelector('#talk-error:not([hidden])');
    const message = (await page.textContent('#talk-error'))!;
    expect(message).toContain('voice speaks English only');
    expect(message).toContain('Choose English');
    expect(message).toContain('multilingual preset voice');
    expect(message).toContain('voice sample');
    // No raw field names or codes.
    expect(message).not.toMatch(/language:|body|multilingual_voice_required|"es"/);
    expect(await json<unknown[]>('GET', '/v1/sessions')).toEqual([]);
  }, 30_000);
});
