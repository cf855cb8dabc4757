// The "Recording" mark (issue 43 point 7) on the console's Talk page and on
// examples/web-client, in real headless Chromium over a real LiveKit: a recorded session shows
// the visitor a visible, announced mark over the video's corner from joining until it ends; an
// unrecorded one shows none. The example reads only the room's metadata, as a customer's own
// app would. No agent: the mark is the room's metadata, which the room has from its creation.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { launchBrowser, type TestBrowser, type TestPage } from '../support/browser.ts';
import { identityForm } from '../support/forms.ts';
import { expectMarkOnVideo } from '../support/recording-mark.ts';
import { oneEngine, startTestService, type TestService } from '../support/service.ts';
import { signUpInBrowser } from './support.ts';

const VIEWPORT = { width: 1280, height: 800 };
const MARK = '#recording-mark';
const EMAIL = 'rec@example.com';

describe.each(oneEngine('pglite'))('the recording mark in the console and the example client on %s', (engine) => {
  let service: TestService;
  let browser: TestBrowser;
  let apiKey = '';
  const identities = { recorded: '', unrecorded: '' };
  const pages = new Set<TestPage>();

  const api = (path: string, body: BodyInit, type?: string) =>
    fetch(`${service.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, ...(type && { 'content-type': type }) },
      body,
    });

  async function identity(name: string, recordSessions: boolean): Promise<string> {
    const created = await api(
      '/v1/identities',
      await identityForm({ name, language: 'en', record_sessions: String(recordSessions) }),
    );
    expect(created.status).toBe(200);
    return ((await created.json()) as { identity_id: string }).identity_id;
  }

  async function open(path: string): Promise<TestPage> {
    const visitor = await browser.newPage({ viewport: VIEWPORT, baseURL: service.url });
    pages.add(visitor);
    await visitor.page.goto(path);
    return visitor;
  }

  /** Signs in and starts a session on the Talk page. */
  async function talk(identityId: string): Promise<TestPage> {
    const visitor = await open('/console#/identities');
    const { page } = visitor;
    await page.fill('#email', EMAIL);
    await page.fill('#password', 'a long enough password');
    await page.click('#sign-in');
    await page.waitForSelector('#account-email');
    await page.goto('/console#/talk');
    await page.selectOption('#talk-identity', identityId);
    await page.click('#start-talk');
    await page.waitForSelector('#connection-state[data-state=connected]', { timeout: 30_000 });
    return visitor;
  }

  /** Starts a session with the secret key, as the customer's server would, and opens the example with it. */
  async function example(record: boolean): Promise<Page> {
    const started = await api(
      '/v1/sessions/start',
      JSON.stringify({ identity_id: identities.unrecorded, record }),
      'application/json',
    );
    expect(started.status).toBe(200);
    const session = (await started.json()) as { rtc_url: string; token: string; record: boolean };
    expect(session.record).toBe(record);
    const visitor = await open(
      `/examples/web-client/?${new URLSearchParams({ url: session.rtc_url, token: session.token })}`,
    );
    await visitor.page.waitForSelector('#connection-state[data-state=connected]', { timeout: 30_000 });
    return visitor.page;
  }

  beforeAll(async () => {
    service = await startTestService(engine, { livekit: 'local', env: { CONSOLE_STARTER_CREDITS: '5000' } });
    browser = await launchBrowser();
    const first = await open('/console');
    apiKey = await signUpInBrowser(first.page, EMAIL);
    await first.close();
    pages.delete(first);
    identities.recorded = await identity('Rita', true);
    identities.unrecorded = await identity('Una', false);
  }, 120_000);
  afterEach(async () => {
    await Promise.all([...pages].map((page) => page.close()));
    pages.clear();
  });
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  test('Talk: a recorded session shows "Recording" over the video while connected; gone when it ends', async () => {
    const { page, errors } = await talk(identities.recorded);
    await expectMarkOnVideo(page, MARK, '#avatar-video');
    await page.click('#end-session');
    await page.waitForSelector('#connection-state[data-state=disconnected]', { timeout: 15_000 });
    expect(await page.isVisible(MARK)).toBe(false);
    expect(errors.filter((error) => !/\{room: ses_/.test(error))).toEqual([]);
  }, 60_000);

  test('Talk: an unrecorded session shows no mark', async () => {
    const { page } = await talk(identities.unrecorded);
    await Bun.sleep(500); // the room's metadata has been read: nothing changes it
    expect(await page.isVisible(MARK)).toBe(false);
    await page.click('#end-session');
    await page.waitForSelector('#connection-state[data-state=disconnected]', { timeout: 15_000 });
  }, 60_000);

  test('the example client: a recorded session shows the mark from the room’s metadata, an unrecorded one none', async () => {
    const recorded = await example(true);
    await expectMarkOnVideo(recorded, MARK, '#avatar-video');
    await recorded.click('#end-session');
    await recorded.waitForSelector('#connection-state[data-state=disconnected]', { timeout: 15_000 });
    expect(await recorded.isVisible(MARK)).toBe(false);

    const unrecorded = await example(false);
    await Bun.sleep(500);
    expect(await unrecorded.isVisible(MARK)).toBe(false);
  }, 60_000);
});
