// The embeddable avatar in real headless Chromium, on a customer's website: pages on another
// origin than the service (test/embed/host-pages.ts serves examples/embed) load /embed.js and
// <likeness-avatar>, or the iframe form, and talk to a real LiveKit server and agent (wire
// fakes for the cloud providers; Chromium's fake microphone asks a question in a loop). A page
// whose origin the key does not list is refused in words, and so is a frame it embeds; the
// key's limits show the wait; a React page passes the key as `publishable-key`.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test';
import type { Frame, Page } from 'playwright-core';
import { launchBrowser, speechWav, type TestBrowser, type TestPage } from '../support/browser.ts';
import { startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { createdIdentityId, type HostPages, hostPagesKey, startHostPages } from './host-pages.ts';

const PHONE = { width: 390, height: 844 };
const START_PATH = '/v1/embed/sessions';

interface EmbedSession {
  session_id: string;
  visual_awareness: boolean;
}

describe('the embed in Chromium', () => {
  let service: TestService;
  let account: TestAccount;
  let browser: TestBrowser;
  let host: HostPages;
  let identityId = '';
  /** The key the host pages carry; a test may swap it. */
  let pageKey = '';
  let openKey = '';

  const publishableKey = (body: Record<string, unknown>) => hostPagesKey(account, host, identityId, body);

  async function sessionStatus(id: string): Promise<string> {
    const response = await account.call('GET', `/v1/sessions/${id}`);
    return ((await response.json()) as { status: string }).status;
  }

  async function waitForEnded(id: string): Promise<void> {
    const deadline = Date.now() + 20_000;
    while ((await sessionStatus(id)) !== 'ended') {
      if (Date.now() > deadline) throw new Error(`session ${id} did not end: ${await sessionStatus(id)}`);
      await Bun.sleep(250);
    }
  }

  async function sessionCount(): Promise<number> {
    return ((await (await account.call('GET', '/v1/sessions')).json()) as unknown[]).length;
  }

  /** Clicks Call; returns the start's answer once the call is live and the avatar's video plays. */
  async function callUntilLive(scope: Page | Frame, page: Page): Promise<EmbedSession> {
    const started = page.waitForResponse((response) => response.url().endsWith(START_PATH), { timeout: 30_000 });
    await scope.click('likeness-avatar button.call');
    const response = await started;
    const session = (await response.json()) as EmbedSession;
    expect({ status: response.status(), session }).toMatchObject({ status: 200 });
    await scope.waitForSelector('likeness-avatar .root[data-state=live]', { timeout: 30_000 });
    await scope.waitForFunction(
      () => (document.querySelector('likeness-avatar')?.shadowRoot?.querySelector('video')?.videoWidth ?? 0) > 0,
      undefined,
      { timeout: 30_000 },
    );
    return session;
  }

  /** Pages still open when a test ends (it failed midway): closed, and their sessions ended. */
  const visitors = new Set<TestPage>();

  async function open(url: string): Promise<TestPage> {
    const visitor = await browser.newPage({ viewport: PHONE });
    visitors.add(visitor);
    const close = visitor.close;
    visitor.close = async () => {
      visitors.delete(visitor);
      await close();
    };
    await visitor.page.goto(url);
    return visitor;
  }

  /** Opens the host page on `origin` and clicks Call: the page and the start's answer. */
  async function clickCall(origin: string) {
    const visitor = await open(`${origin}/index.html`);
    const { page } = visitor;
    const answered = page.waitForResponse((response) => response.url().endsWith(START_PATH));
    await page.click('likeness-avatar button.call');
    return { visitor, page, response: await answered };
  }

  beforeAll(async () => {
    service = await startTestService('pglite', { livekit: 'local', agent: true });
    account = await service.account({ credits: 5000 });
    // Pauses long enough for an answer between two questions.
    browser = await launchBrowser({ audioFile: await speechWav('Hello, how are you today?', { pauseSeconds: 2.5 }) });
    host = startHostPages(() => ({ service: service.url, key: pageKey, identity: identityId }));
    identityId = await createdIdentityId(account, { name: 'Mira', language: 'en' });
    openKey = await publishableKey({ name: 'shop' });
    pageKey = openKey;
  }, 120_000);
  // A visitor may hold one conversation at a time per key: a test that failed midway must not
  // leave its call open for the next.
  afterEach(async () => {
    await Promise.all([...visitors].map((visitor) => visitor.close()));
    const listed = (await (await account.call('GET', '/v1/sessions')).json()) as {
      session_id: string;
      status: string;
    }[];
    for (const session of listed.filter((row) => row.status !== 'ended'))
      await account.call('POST', `/v1/sessions/${session.session_id}/end`);
  });
  afterAll(async () => {
    await browser?.close();
    host?.stop();
    await service?.stop();
  });

  test('a page on another origin: one script tag and the element; the visitor asks, the reply is captioned; Mute, End', async () => {
    const visitor = await open(`${host.allowed}/index.html`);
    const { page } = visitor;
    expect(new URL(service.url).origin).not.toBe(host.allowed);
    // Before the call: a labelled button only, and only the small script was fetched.
    const call = page.locator('likeness-avatar button.call');
    expect(await call.getAttribute('aria-label')).toBe('Start a video call with the avatar');
    expect(await page.isVisible('likeness-avatar .stage')).toBe(false);
    const startRequest = page.waitForRequest(
      (request) => request.url().endsWith(START_PATH) && request.method() === 'POST',
    );
    const session = await callUntilLive(page, page);
    expect((await (await startRequest).allHeaders()).origin).toBe(host.allowed);
    // The visitor's words and the agent's reply, as captions over the video.
    await page.waitForSelector('likeness-avatar .captions li.visitor', { timeout: 60_000 });
    await page.waitForSelector('likeness-avatar .captions li.agent', { timeout: 90_000 });
    expect((await page.textContent('likeness-avatar .captions li.agent'))!.replace('Avatar:', '').trim()).not.toBe('');
    // Visual awareness (on by default for an identity): the camera toggle is offered and publishes.
    expect(session.visual_awareness).toBe(true);
    await page.click('likeness-avatar button.camera');
    await page.waitForSelector('likeness-avatar button.camera[aria-pressed=true]');
    await page.click('likeness-avatar button.mute');
    await page.waitForSelector('likeness-avatar button.mute[aria-pressed=true]');
    expect(await page.getAttribute('likeness-avatar button.mute', 'aria-label')).toBe('Unmute the microphone');
    // On a phone the avatar and its controls fit the screen's width.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.click('likeness-avatar button.end');
    await page.waitForSelector('likeness-avatar .root[data-state=ended]', { timeout: 15_000 });
    expect(await page.textContent('likeness-avatar button.call')).toBe('Call again');
    await waitForEnded(session.session_id);
    expect(visitor.errors.filter((error) => !/\{room: ses_/.test(error))).toEqual([]);
    await visitor.close();
  }, 240_000);

  test('an origin not on the key’s list is refused: the component shows why, nothing starts', async () => {
    const before = await sessionCount();
    const { visitor, page, response } = await clickCall(host.other);
    expect(response.status()).toBe(403);
    const { detail } = (await response.json()) as { detail: string };
    await page.waitForSelector('likeness-avatar .problem:not([hidden])');
    expect(await page.textContent('likeness-avatar .problem')).toBe(detail);
    expect(detail).toContain(host.other);
    expect(await page.isVisible('likeness-avatar .stage')).toBe(false);
    expect(await page.isEnabled('likeness-avatar button.call')).toBe(true);
    expect(await sessionCount()).toBe(before);
    await visitor.close();
  }, 60_000);

  test('the iframe form starts from an allowed page (it names its embedder); a page off the list cannot show it', async () => {
    const visitor = await open(`${host.allowed}/iframe.html`);
    const { page } = visitor;
    const frame = await (await page.waitForSelector('iframe')).contentFrame();
    await frame!.waitForSelector('likeness-avatar button.call');
    const startRequest = page.waitForRequest(
      (request) => request.url().endsWith(START_PATH) && request.method() === 'POST',
    );
    const session = await callUntilLive(frame!, page);
    const sent = await (await startRequest).allHeaders();
    expect(sent.origin).toBe(new URL(service.url).origin);
    expect(sent['x-likeness-embedder']).toBe(host.allowed);
    await frame!.click('likeness-avatar button.end');
    await frame!.waitForSelector('likeness-avatar .root[data-state=ended]', { timeout: 15_000 });
    await waitForEnded(session.session_id);
    await visitor.close();

    // The same page on another origin: the browser refuses to show the frame (frame-ancestors).
    const before = await sessionCount();
    const outsider = await open(`${host.other}/iframe.html`);
    const blocked = await (await outsider.page.waitForSelector('iframe')).contentFrame();
    await Bun.sleep(1000);
    expect(await blocked!.$('likeness-avatar')).toBeNull();
    expect(blocked!.url()).not.toContain('/embed/frame');
    expect(await sessionCount()).toBe(before);
    await outsider.close();

    // Opened on its own, the frame page explains itself and offers no call.
    const alone = await open(`${service.url}/embed/frame?key=${pageKey}&identity=${identityId}`);
    await alone.page.waitForSelector('likeness-avatar .problem:not([hidden])');
    expect(await alone.page.textContent('likeness-avatar .problem')).toContain('<iframe>');
    expect(await alone.page.isVisible('likeness-avatar button.call')).toBe(false);
    await alone.close();
  }, 180_000);

  test('the key’s limit answers 429: the component says so and how long to wait', async () => {
    pageKey = await publishableKey({ name: 'one a minute', limits: { sessions_per_minute: 1 } });
    try {
      // The minute's one start, as a page of the allowed origin would make it.
      const first = await fetch(`${service.url}${START_PATH}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${pageKey}`, 'content-type': 'application/json', origin: host.allowed },
        body: JSON.stringify({ identity_id: identityId }),
      });
      const answer = (await first.json()) as EmbedSession;
      expect({ status: first.status, answer }).toMatchObject({ status: 200 });
      const { session_id } = answer;
      await account.call('POST', `/v1/sessions/${session_id}/end`);

      const { visitor, page, response } = await clickCall(host.allowed);
      expect(response.status()).toBe(429);
      const wait = Number(await response.headerValue('retry-after'));
      expect(wait).toBeGreaterThan(0);
      const { detail } = (await response.json()) as { detail: string };
      await page.waitForSelector('likeness-avatar .problem:not([hidden])');
      expect(await page.textContent('likeness-avatar .problem')).toBe(detail);
      // The button waits as long as the service said (Retry-After, which the page may read), counting down.
      expect(await page.isDisabled('likeness-avatar button.call')).toBe(true);
      const countdown = (await page.textContent('likeness-avatar .status'))!;
      expect(countdown).toMatch(/^You can call again in \d+ s\.$/);
      expect(Number(/\d+/.exec(countdown)![0])).toBeLessThanOrEqual(wait);
      await visitor.close();
    } finally {
      pageKey = openKey;
    }
  }, 60_000);

  test('a React page: the element renders, and the call starts with `publishable-key`', async () => {
    const visitor = await open(`${host.allowed}/react.html`);
    const { page } = visitor;
    await page.waitForSelector('likeness-avatar button.call');
    expect(await page.getAttribute('likeness-avatar', 'publishable-key')).toBe(pageKey);
    expect(await page.textContent('#call-state')).toBe('Call: idle');
    const startRequest = page.waitForRequest(
      (request) => request.url().endsWith(START_PATH) && request.method() === 'POST',
    );
    const session = await callUntilLive(page, page);
    expect((await (await startRequest).allHeaders()).authorization).toBe(`Bearer ${pageKey}`);
    // The element's event reaches React.
    await page.waitForSelector('#call-state:text("Call: live")');
    await page.click('likeness-avatar button.end');
    await page.waitForSelector('#call-state:text("Call: ended")', { timeout: 15_000 });
    await waitForEnded(session.session_id);
    expect(visitor.errors.filter((error) => !/\{room: ses_/.test(error))).toEqual([]);
    await visitor.close();
  }, 120_000);
});
