// SIGNUP=off (issue 41 point 5): the operator makes the accounts (`likeness accounts create`,
// then `accounts set-password` for a console sign-in); the sign-up route refuses everyone with a
// 403 that says so, counting and creating nothing, and the console's page offers no sign-up.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { SIGN_UP_OFF } from '../../src/console/index.ts';
import { launchBrowser, type TestBrowser } from '../support/browser.ts';
import { ENGINES, startTestService, type TestService } from '../support/service.ts';
import { ConsoleClient, uniqueEmail } from './support.ts';

const PASSWORD = 'correct horse battery';

describe.each(ENGINES)('sign-up turned off on %s', (engine) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService(engine, { env: { SIGNUP: 'off', CONSOLE_SIGNUPS_PER_HOUR: '1' } });
  });
  afterAll(() => service.stop());

  test('a sign-up answers 403 with the reason, whatever its body, and makes no account', async () => {
    const before = await service.count('accounts');
    const bodies: unknown[] = [{ email: uniqueEmail(), password: PASSWORD }, { email: 'not an email' }, {}];
    for (const json of bodies) {
      const answer = await new ConsoleClient(service).call('POST', '/console/api/sign-up', { json });
      expect(answer.status).toBe(403);
      expect(answer.headers.get('set-cookie')).toBeNull();
      expect(await answer.json()).toEqual({ detail: SIGN_UP_OFF });
    }
    expect(await service.count('accounts')).toBe(before);
  });

  test('the console is told sign-up is off', async () => {
    const state = await new ConsoleClient(service).call('GET', '/console/api/signed-in');
    expect(await state.json()).toEqual({ signed_in: false, sign_up: false });
  });

  test('the invite path: an account the operator made, with the password they set, signs in', async () => {
    const email = uniqueEmail();
    const { operations } = service.services;
    const created = await operations.createAccount({ email, credits: 100 });
    await operations.setConsolePassword({ account_id: created.account_id, password: PASSWORD });
    const browser = new ConsoleClient(service);
    const signedIn = await browser.signIn(email, PASSWORD);
    expect(signedIn.status).toBe(200);
    expect(((await signedIn.json()) as { account: { account_id: string } }).account.account_id).toBe(
      created.account_id,
    );
    const state = await browser.call('GET', '/console/api/signed-in');
    expect(await state.json()).toMatchObject({ signed_in: true, sign_up: false });
  });
});

describe('the sign-in page with sign-up off, in Chromium', () => {
  let service: TestService;
  let browser: TestBrowser;
  beforeAll(async () => {
    service = await startTestService('pglite', { env: { SIGNUP: 'off' } });
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  test('offers sign-in only and says who makes accounts', async () => {
    const { page, errors } = await browser.newPage({ baseURL: service.url });
    await page.goto('/console');
    await page.waitForSelector('#sign-in-form');
    expect(await page.locator('#sign-up').count()).toBe(0);
    expect(await page.locator('#sign-in').isVisible()).toBe(true);
    expect(await page.locator('#sign-in-lead').textContent()).toContain('made by its operator');
    expect(errors).toEqual([]);
  }, 60_000);
});
