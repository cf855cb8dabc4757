// Talk in real headless Chromium, against a real LiveKit server and agent (wire fakes for the
// cloud providers; Chromium's fake microphone speaks a question in a loop). Nothing starts, and
// nothing is billed, for a visitor whose page has no microphone: refused, missing, or an
// insecure origin (plain HTTP at the host's network address). While talking, the face, the
// controls and the latest turns are on screen together at a desktop's and a phone's size, and
// the transcript follows new turns unless the reader scrolled up.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { hostAddress } from '../../src/config.ts';
import { launchBrowser, speechWav, type TestBrowser } from '../support/browser.ts';
import { identityForm } from '../support/forms.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { conversationLayout, inside } from './measure.ts';
import { signUpInBrowser } from './support.ts';

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };
const PASSWORD = 'a long enough password';

async function signIn(page: Page, email: string): Promise<void> {
  await page.goto('/console#/identities');
  await page.fill('#email', email);
  await page.fill('#password', PASSWORD);
  await page.click('#sign-in');
  await page.waitForSelector('#account-email');
}

describe('Talk in Chromium', () => {
  let service: TestService;
  let browser: TestBrowser;
  let apiKey = '';
  const email = 'mira@example.com';
  const sessions = async () =>
    (
      (await (
        await fetch(`${service.url}/v1/sessions`, { headers: { authorization: `Bearer ${apiKey}` } })
      ).json()) as unknown[]
    ).length;

  beforeAll(async () => {
    service = await startTestService('pglite', {
      livekit: 'local',
      agent: true,
      env: { CONSOLE_STARTER_CREDITS: '5000' },
    });
    // Pauses long enough for an answer between two questions.
    browser = await launchBrowser({ audioFile: await speechWav('Hello, how are you today?', { pauseSeconds: 2.5 }) });
    const first = await browser.newPage({ viewport: DESKTOP, baseURL: service.url });
    apiKey = await signUpInBrowser(first.page, email);
    await first.close();
    const created = await fetch(`${service.url}/v1/identities`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}` },
      body: await identityForm({ name: 'Mira', language: 'en' }),
    });
    expect(created.status).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  for (const [name, refusal, words] of [
    ['refused', 'NotAllowedError', /blocked the microphone.*Allow it/],
    ['missing', 'NotFoundError', /No microphone was found.*Plug one in/],
  ] as const) {
    test(`a ${name} microphone is explained before anything starts; no session, no charge`, async () => {
      const visitor = await browser.newPage({ viewport: PHONE, baseURL: service.url });
      const { page } = visitor;
      // What the browser answers when the person said no, or the machine has no microphone.
      await page.addInitScript((error) => {
        navigator.mediaDevices.getUserMedia = () => Promise.reject(new DOMException('refused in the test', error));
      }, refusal);
      await signIn(page, email);
      const before = { sessions: await sessions(), balance: await page.textContent('#account-balance') };
      await page.goto('/console#/talk');
      await page.click('#start-talk');
      await page.waitForSelector('#talk-error:not([hidden])');
      expect(await page.textContent('#talk-error')).toMatch(words);
      expect(await page.textContent('#talk-error')).toMatch(/no session was started/i);
      expect(await page.isVisible('#talk-stage')).toBe(false);
      expect(await page.isEnabled('#start-talk')).toBe(true);
      expect(await sessions()).toBe(before.sessions);
      await page.reload();
      await page.waitForSelector('#account-balance');
      expect(await page.textContent('#account-balance')).toBe(before.balance);
      await visitor.close();
    }, 30_000);
  }

  test('over plain HTTP at the network address the page says to open it over HTTPS, with a link, and starts nothing', async () => {
    const address = hostAddress();
    if (!address) throw new Error('this machine has no non-loopback IPv4 address to test with');
    // The same account on a service that listens on the network, without its HTTPS listener.
    const network = await startTestService('pglite', { env: { HOST: '0.0.0.0', TLS_PORT: '0' } });
    try {
      const base = `http://${address}:${network.config.port}`;
      const visitor = await browser.newPage({ viewport: PHONE, baseURL: base });
      const { page } = visitor;
      const key = await signUpInBrowser(page, 'far@example.com');
      expect(await page.evaluate(() => window.isSecureContext)).toBe(false);
      await fetch(`${base}/v1/identities`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}` },
        body: await identityForm({ language: 'en' }),
      });
      await page.goto('/console#/talk');
      await page.waitForSelector('#talk-error:not([hidden])');
      const message = (await page.textContent('#talk-error'))!;
      expect(message).toContain('over HTTPS');
      expect(message).toContain('localhost');
      expect(await page.getAttribute('#talk-error a', 'href')).toBe(`https://${address}:8443/console#/talk`);
      expect(await page.isDisabled('#start-talk')).toBe(true);
      // Even a submit from the keyboard or a script starts nothing.
      await page.$eval('#talk-form', (form) => (form as HTMLFormElement).requestSubmit());
      await Bun.sleep(500);
      expect(await page.isVisible('#talk-stage')).toBe(false);
      const listed = (await (
        await fetch(`${base}/v1/sessions`, { headers: { authorization: `Bearer ${key}` } })
      ).json()) as unknown[];
      expect(listed).toEqual([]);
      await visitor.close();
    } finally {
      await network.stop();
    }
  }, 60_000);

  for (const [size, viewport, shape] of [
    ['a desktop', DESKTOP, 'desktop'],
    ['a phone', PHONE, 'phone'],
  ] as const) {
    test(`on ${size} (${viewport.width}×${viewport.height}) the face, Mute, End and the latest turn are on screen together; the transcript follows unless scrolled up`, async () => {
      const visitor = await browser.newPage({ viewport, baseURL: service.url });
      const { page } = visitor;
      await signIn(page, email);
      await page.goto('/console#/talk');
      await page.selectOption('#talk-form-factor', shape);
      await page.click('#start-talk');
      await page.waitForSelector('#connection-state[data-state=connected]', { timeout: 30_000 });
      await page.waitForFunction(
        () => (document.querySelector<HTMLVideoElement>('#avatar-video')?.videoWidth ?? 0) > 0,
        undefined,
        { timeout: 30_000 },
      );
      // Talking: the fake microphone asks, the agent answers; enough turns to overflow the list.
      await page.waitForFunction(
        () => {
          const list = document.querySelector('#transcript')!;
          return list.querySelector('li.turn-agent') && list.scrollHeight > list.clientHeight + 40;
        },
        undefined,
        { timeout: 90_000 },
      );
      // What the agent is doing (its lk.agent.state) shows beside the connection, and its
      // captions are the transcript's agent lines.
      await page.waitForSelector('#agent-state[data-state=speaking], #agent-state[data-state=thinking]', {
        timeout: 30_000,
      });
      await page.waitForSelector('#agent-state[data-state=listening]', { timeout: 30_000 });
      expect(await page.$eval('#agent-state', (p) => p.textContent)).toBe('Mira: Listening');
      expect(await page.$eval('#transcript li.turn-agent .text', (t) => t.textContent?.trim().length)).toBeGreaterThan(
        0,
      );
      const talking = await conversationLayout(page);
      expect(talking.screen).toMatchObject({ bottom: viewport.height, right: viewport.width });
      const { screen } = talking;
      expect({
        video: inside(talking.video, screen),
        mute: inside(talking.mute, screen),
        end: inside(talking.end, screen),
        lastRow: inside(talking.lastRow, screen),
      }).toEqual({ video: true, mute: true, end: true, lastRow: true });
      // The newest turn is in the transcript's visible part, not below its fold.
      expect(inside(talking.lastRow, talking.transcript)).toBe(true);
      // The page itself does not scroll: only the transcript does.
      expect(await page.evaluate(() => document.documentElement.scrollHeight - innerHeight)).toBeLessThanOrEqual(1);

      // The reader scrolls up: new turns arrive without pulling them down.
      await page.$eval('#transcript', (list) => (list.scrollTop = 0));
      const rows = talking.rows;
      await page.waitForFunction((count) => document.querySelectorAll('#transcript li').length > count + 1, rows, {
        timeout: 60_000,
      });
      expect(await page.$eval('#transcript', (list) => list.scrollTop)).toBe(0);
      // Back at the end, it follows again.
      await page.$eval('#transcript', (list) => (list.scrollTop = list.scrollHeight));
      const now = (await conversationLayout(page)).rows;
      await page.waitForFunction((count) => document.querySelectorAll('#transcript li').length > count, now, {
        timeout: 60_000,
      });
      await Bun.sleep(200);
      const following = await conversationLayout(page);
      expect(inside(following.lastRow, following.transcript)).toBe(true);

      await page.click('#end-session');
      await page.waitForSelector('#connection-state[data-state=disconnected]', { timeout: 15_000 });
      expect(visitor.errors.filter((e) => !/\{room: ses_/.test(e))).toEqual([]);
      await visitor.close();
    }, 240_000);
  }
});
