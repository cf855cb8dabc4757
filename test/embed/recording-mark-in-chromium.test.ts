// The embed's "Recording" mark (issue 43 point 7) in real headless Chromium over a real LiveKit:
// a key that records its sessions shows the visitor a visible, announced mark over the video's
// corner from the call's start until it ends; a key that does not shows none. No agent: the
// mark is the room's metadata, which the room has from its creation.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test';
import { launchBrowser, type TestBrowser, type TestPage } from '../support/browser.ts';
import { expectMarkOnVideo } from '../support/recording-mark.ts';
import { oneEngine, startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { createdIdentityId, type HostPages, hostPagesKey, startHostPages } from './host-pages.ts';

const START_PATH = '/v1/embed/sessions';
const MARK = 'likeness-avatar .recording';

describe.each(oneEngine('pglite'))('the embed’s recording mark on %s', (engine) => {
  let service: TestService;
  let account: TestAccount;
  let browser: TestBrowser;
  let host: HostPages;
  let identityId = '';
  let pageKey = '';
  const visitors = new Set<TestPage>();

  const publishableKey = (recordSessions: boolean) =>
    hostPagesKey(account, host, identityId, { record_sessions: recordSessions });

  /** Opens the host page with `key`, clicks Call and waits for the call to be live; returns the start's `record`. */
  async function callLive(key: string): Promise<{ visitor: TestPage; record: boolean }> {
    pageKey = key;
    const visitor = await browser.newPage({ viewport: { width: 390, height: 844 } });
    visitors.add(visitor);
    await visitor.page.goto(`${host.allowed}/index.html`);
    const started = visitor.page.waitForResponse((response) => response.url().endsWith(START_PATH));
    await visitor.page.click('likeness-avatar button.call');
    const answer = await started;
    expect(answer.status()).toBe(200);
    await visitor.page.waitForSelector('likeness-avatar .root[data-state=live]', { timeout: 30_000 });
    return { visitor, record: ((await answer.json()) as { record: boolean }).record };
  }

  beforeAll(async () => {
    service = await startTestService(engine, { livekit: 'local' });
    account = await service.account({ credits: 5000 });
    browser = await launchBrowser();
    host = startHostPages(() => ({ service: service.url, key: pageKey, identity: identityId }));
    identityId = await createdIdentityId(account, { language: 'en' });
  }, 120_000);
  afterEach(async () => {
    await Promise.all([...visitors].map((visitor) => visitor.close()));
    visitors.clear();
  });
  afterAll(async () => {
    await browser?.close();
    host?.stop();
    await service?.stop();
  });

  test('a recorded call shows "Recording" over the video’s top-right corner while live, announced; gone when it ends', async () => {
    const { visitor, record } = await callLive(await publishableKey(true));
    const { page } = visitor;
    expect(record).toBe(true);
    // Inside the video's box, in its top-right corner, away from the face in the middle.
    await expectMarkOnVideo(page, MARK, 'likeness-avatar video');
    // The red dot beside the words, hidden from screen readers (the words say it).
    const dot = await page.$eval(`${MARK} .dot`, (node) => ({
      color: getComputedStyle(node).backgroundColor,
      hidden: node.getAttribute('aria-hidden'),
    }));
    expect(dot).toEqual({ color: 'rgb(229, 57, 53)', hidden: 'true' });

    await page.click('likeness-avatar button.end');
    await page.waitForSelector('likeness-avatar .root[data-state=ended]', { timeout: 15_000 });
    expect(await page.locator(MARK).isVisible()).toBe(false);
    expect(visitor.errors.filter((error) => !/\{room: ses_/.test(error))).toEqual([]);
  }, 60_000);

  test('an unrecorded call shows no mark', async () => {
    const { visitor, record } = await callLive(await publishableKey(false));
    expect(record).toBe(false);
    await Bun.sleep(500); // the room's metadata has been read: nothing changes it
    expect(await visitor.page.isVisible(MARK)).toBe(false);
    await visitor.page.click('likeness-avatar button.end');
    await visitor.page.waitForSelector('likeness-avatar .root[data-state=ended]', { timeout: 15_000 });
  }, 60_000);
});
