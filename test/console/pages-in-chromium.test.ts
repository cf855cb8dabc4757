// The console and the example client in real headless Chromium, against a real LiveKit server
// and agent (wire fakes for the cloud providers): Chromium's fake microphone speaks a phrase,
// its fake camera shows a test pattern. Screenshots of each page: `UPDATE_SCREENSHOTS=1 npm test
// -- test/console/pages-in-chromium.test.ts` writes them to docs/console/.
// biome-ignore-all lint/style/noExcessiveLinesPerFile: one service and one Chromium shared by every page: split, each part would start its own
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { launchBrowser, speechWav, type TestBrowser, type TestPage } from '../support/browser.ts';
import { identityForm } from '../support/forms.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { eventually } from '../support/visitor.ts';
import {
  audioElements,
  conversationLayout,
  headerWordsSplit,
  inside,
  usageChartLastBar,
  videoPlays,
} from './measure.ts';
import { removeScreenshots, screenshot, usability } from './support.ts';

const ASTRONAUT = join(import.meta.dir, '../fixtures/astronaut.png');
const API_KEY = /lk_[0-9A-Za-z]{43}/;
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };

describe('console in Chromium', () => {
  let service: TestService;
  let browser: TestBrowser;
  let visitor: TestPage;
  let apiKey = '';
  /** Every URL the phone page asked for. */
  const requested: string[] = [];

  beforeAll(async () => {
    // Minutes of 3 s: the insufficient-credits case runs out within seconds.
    service = await startTestService('pglite', {
      livekit: 'local',
      agent: true,
      env: { CONSOLE_STARTER_CREDITS: '1000', BILLING_INTERVAL_SECONDS: '3' },
    });
    // The Deepgram fake transcribes whatever speech it hears as its scripted utterance.
    browser = await launchBrowser({ audioFile: await speechWav('Hello, how are you today?', { pauseSeconds: 1.5 }) });
    visitor = await browser.newPage({ viewport: PHONE, baseURL: service.url });
    visitor.page.on('request', (request) => requested.push(request.url()));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    removeScreenshots();
  });

  test('sign up: the API key is shown once on the identities page, then gone from the page', async () => {
    const { page } = visitor;
    // Opening the console signed out is no error: nothing fails, nothing is logged.
    const failed: string[] = [];
    page.on(
      'response',
      (response) => void (response.status() >= 400 && failed.push(`${response.status()} ${response.url()}`)),
    );
    page.on('requestfailed', (request) => void failed.push(`failed ${request.url()}`));
    await page.goto('/');
    await page.waitForSelector('#sign-in-form');
    await page.waitForLoadState('networkidle');
    expect({ failed, errors: visitor.errors }).toEqual({ failed: [], errors: [] });
    await screenshot(page, 'sign-in');
    await page.fill('#email', 'ada@example.com');
    await page.fill('#password', 'a long enough password');
    await page.click('#sign-up');
    const shown = await page.waitForSelector('#api-key-once');
    // Signed up is signed in: the URL and the page are the console's first page, the key above it.
    expect(new URL(page.url()).hash).toBe('#/identities');
    expect(await page.textContent('#page h1')).toBe('Identities');
    apiKey = (await shown.textContent())!.trim();
    expect(apiKey).toMatch(new RegExp(`^${API_KEY.source}$`));
    await screenshot(page, 'api-key-once');
    // The key is real: it opens the public API.
    expect(
      (await fetch(`${service.url}/v1/identities`, { headers: { authorization: `Bearer ${apiKey}` } })).status,
    ).toBe(200);
    await page.click('#continue');
    await page.waitForSelector('#api-key-once', { state: 'detached' });
    expect(await page.content()).not.toContain(apiKey);
    expect(await page.textContent('#account-email')).toContain('ada@example.com');
    expect(new URL(page.url()).hash).toBe('#/identities');
  });

  test('create an identity from a photo; it shows as ready', async () => {
    const { page } = visitor;
    await page.goto('/console#/identities');
    await page.fill('#identity-name', 'Ada');
    await page.fill('#identity-prompt', 'You are Ada, a friendly guide to Paris.');
    await page.selectOption('#identity-language', 'en');
    // The preset voices come from the service's catalogue.
    await page.selectOption('#identity-voice', 'adam');
    await page.setInputFiles('#identity-image', ASTRONAUT);
    await page.click('#create-identity');
    await page.waitForSelector('li[data-testid=identity-card][data-status=ready]', { timeout: 30_000 });
    expect(await page.locator('li[data-testid=identity-card]').count()).toBe(1);
    const [created] = (await (
      await fetch(`${service.url}/v1/identities`, { headers: { authorization: `Bearer ${apiKey}` } })
    ).json()) as { identity_id: string }[];
    const identity = (await (
      await fetch(`${service.url}/v1/identities/${created!.identity_id}`, {
        headers: { authorization: `Bearer ${apiKey}` },
      })
    ).json()) as Record<string, unknown>;
    expect(identity).toMatchObject({
      name: 'Ada',
      language: 'en',
      voice_id: 'adam',
      prompt: 'You are Ada, a friendly guide to Paris.',
    });
    await screenshot(page, 'identities');
  });

  test('Talk: the avatar plays, one audio element plays its voice, the camera toggle is offered, the agent hears the microphone, End disconnects', async () => {
    const { page } = visitor;
    await page.goto('/console#/talk');
    await page.waitForSelector('#talk-form');
    await page.selectOption('#talk-form-factor', 'phone');
    await page.check('#talk-visual-awareness');
    await page.click('#start-talk');
    await page.waitForSelector('#connection-state[data-state=connected]', { timeout: 30_000 });
    const size = await videoPlays(page);
    expect(size).toEqual({ width: 540, height: 960 });
    // Exactly one audio element, playing one live track: the avatar's voice.
    await eventually(
      async () => {
        const audio = await audioElements(page);
        return (
          audio.length === 1 &&
          audio[0]!.id === 'avatar-audio' &&
          !audio[0]!.paused &&
          audio[0]!.tracks.join() === 'live'
        );
      },
      15_000,
      'the avatar audio playing',
    );
    // The room has no raw agent voice track to play: only the avatar's two tracks besides the visitor's.
    const [session] = (await (
      await fetch(`${service.url}/v1/sessions`, { headers: { authorization: `Bearer ${apiKey}` } })
    ).json()) as { session_id: string }[];
    const participants = await service.services.livekit.rooms.listParticipants(session!.session_id);
    const visitorIdentity = (p: { identity: string }) => p.identity.startsWith('visitor_');
    const published = participants
      .filter((p) => !visitorIdentity(p))
      .flatMap((p) => p.tracks.map((t) => t.name))
      .sort();
    expect(published).toEqual(['avatar', 'avatar_audio']);
    // Visual awareness is on: the camera toggle is there and publishes the fake camera.
    await page.click('#camera-toggle');
    await eventually(
      async () => {
        const now = await service.services.livekit.rooms.listParticipants(session!.session_id);
        return now.some((p) => visitorIdentity(p) && p.tracks.some((t) => t.source === 1 /* CAMERA */));
      },
      15_000,
      'the visitor camera track',
    );
    // The agent hears the fake microphone: the visitor's words come back as a transcript line.
    // Interim words show first ("Hello, how"); the line then completes in place.
    await page.waitForSelector('#transcript li.turn-visitor', { timeout: 30_000 });
    await page.waitForFunction(
      () =>
        Array.from(document.querySelectorAll('#transcript li.turn-visitor .text'))
          .map((line) => line.textContent)
          .join(' ')
          .replace(/\s+/g, ' ')
          .includes('Hello, how are you today?'),
      undefined,
      { timeout: 15_000 },
    );
    // On a phone too, the face, the controls and the latest turn share the screen.
    const layout = await conversationLayout(page);
    expect([layout.video, layout.mute, layout.end, layout.lastRow].map((part) => inside(part, layout.screen))).toEqual([
      true,
      true,
      true,
      true,
    ]);
    await screenshot(page, 'talk');
    await page.click('#end-session');
    await page.waitForSelector('#connection-state[data-state=disconnected]', { timeout: 15_000 });
    await eventually(
      async () => {
        const ended = (await (
          await fetch(`${service.url}/v1/sessions/${session!.session_id}`, {
            headers: { authorization: `Bearer ${apiKey}` },
          })
        ).json()) as { status: string };
        return ended.status === 'ended';
      },
      15_000,
      'the session ended',
    );
  }, 120_000);

  test('Talk again, without visual awareness: no camera toggle', async () => {
    const { page } = visitor;
    await page.click('#new-session');
    await page.waitForSelector('#talk-form', { state: 'visible' });
    await page.uncheck('#talk-visual-awareness');
    await page.click('#start-talk');
    await page.waitForSelector('#connection-state[data-state=connected]', { timeout: 30_000 });
    await videoPlays(page);
    expect(await page.locator('#camera-toggle').count()).toBe(0);
    await page.click('#end-session');
    await page.waitForSelector('#connection-state[data-state=disconnected]', { timeout: 15_000 });
  }, 90_000);

  test('sessions, credits and keys pages show what happened', async () => {
    const { page } = visitor;
    await page.goto('/console#/sessions');
    await page.waitForSelector('#sessions-table tr[data-session-id]');
    expect(await page.locator('#sessions-table tr[data-session-id]').count()).toBe(2);
    // The billing rule in one sentence, and each row's time with the visitor beside its charge.
    expect(await page.textContent('#billing-rule')).toContain('You pay for the minutes your visitor saw the avatar');
    const sessionsApi = (await page.evaluate(async () => (await fetch('/console/api/sessions')).json())) as {
      visitor_seconds: number;
    }[];
    expect(await page.locator('#sessions-table td[data-label="Watched"]').first().textContent()).toBe(
      `${sessionsApi[0]!.visitor_seconds} s`,
    );
    await page.locator('[data-testid=view-transcript]').last().click();
    await page.waitForSelector('#session-transcript-turns li');
    expect(await page.textContent('#session-transcript')).toContain('Hello, how are you today?');
    // Above it, what the visitor experienced (docs/api.md#session-metrics): this short talk's
    // greeting, cut off by the visitor, reported the providers it ran on.
    const metric = (label: string) => page.textContent(`#session-metrics td[data-label="${label}"]`);
    // The job's report may arrive after the room closed: wait for the API to have it, then look again.
    const first = (
      (await page.evaluate(async () => (await fetch('/console/api/sessions')).json())) as { session_id: string }[]
    ).at(-1)!;
    await eventually(
      async () =>
        (
          (await page.evaluate(
            async (id) => (await fetch(`/console/api/sessions/${id}`)).json(),
            first.session_id,
          )) as { metrics: { providers: { stt: string | null } } }
        ).metrics.providers.stt !== null,
      // Sent as the job leaves, after its summary: 15 s ran out once on a loaded machine.
      30_000,
      'the first session’s quality report',
    );
    await page.locator('[data-testid=view-transcript]').last().click();
    await page.waitForSelector('#session-transcript-turns li');
    expect(await metric('Speech · model · voice')).toBe('deepgram · openai-compatible · elevenlabs');
    expect(await metric('Interruptions')).toMatch(/^\d+$/);
    await screenshot(page, 'sessions');
    await page.goto('/console#/credits');
    await page.waitForSelector('#ledger-table tr[data-entry-id]');
    const ledger = await page.textContent('#ledger-table');
    expect(ledger).toContain('Starter grant');
    expect(ledger).toContain('Identity onboarding');
    // The usage chart (uPlot): the last 30 days, its totals those of the account's sessions, drawn.
    await page.waitForSelector('#usage-chart canvas');
    const sessions = (await page.evaluate(async () => (await fetch('/console/api/sessions')).json())) as {
      billed_minutes: number;
    }[];
    const chart = page.locator('#usage-chart');
    expect(Number(await chart.getAttribute('data-days'))).toBeGreaterThanOrEqual(30);
    expect(Number(await chart.getAttribute('data-avatar-minutes'))).toBe(
      sessions.reduce((sum, s) => sum + s.billed_minutes, 0),
    );
    expect(await page.textContent('#usage-summary')).toContain(`${sessions.length} sessions`);
    const painted = await page.evaluate(() => {
      const canvas = document.querySelector<HTMLCanvasElement>('#usage-chart canvas')!;
      const pixels = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
      let drawn = 0;
      for (let i = 3; i < pixels.length; i += 4) if (pixels[i]! > 0) drawn++;
      return { drawn, of: canvas.width * canvas.height };
    });
    expect(painted.drawn).toBeGreaterThan(painted.of * 0.01);
    await screenshot(page, 'credits');
    await page.goto('/console#/keys');
    await page.fill('#key-name', 'backend');
    await page.click('#create-key');
    const second = (await (await page.waitForSelector('#api-key-once')).textContent())!.trim();
    expect(second).toMatch(API_KEY);
    expect(second).not.toBe(apiKey);
    await page.click('#continue');
    // The list is loaded again after the create: both keys once it has answered (and stay: the
    // page's first load answering late does not bring back the list of one).
    await page.waitForFunction(() => document.querySelectorAll('#keys-table tr[data-key-id]').length === 2);
    await Bun.sleep(300);
    expect(await page.locator('#keys-table tr[data-key-id]').count()).toBe(2);
    await screenshot(page, 'keys');
    for (const hash of ['#/identities', '#/talk', '#/sessions', '#/credits', '#/keys']) {
      await page.goto(`/console${hash}`);
      await page.waitForSelector('#page h1');
      expect({ hash, ...(await usability(page)) }).toEqual({ hash, unlabelled: [], overflow: 0 });
    }
    expect(await page.content()).not.toContain(second);
  }, 60_000);

  test('no API key in any page source, script bundle, or browser storage', async () => {
    const { page, context } = visitor;
    const sources = [
      await (await fetch(`${service.url}/console`)).text(),
      await (await fetch(`${service.url}/console/assets/app.js`)).text(),
      await (await fetch(`${service.url}/console/assets/app.css`)).text(),
      await (await fetch(`${service.url}/examples/web-client/`)).text(),
      await (await fetch(`${service.url}/examples/web-client/main.js`)).text(),
      await page.content(),
    ];
    for (const source of sources) expect(source).not.toMatch(API_KEY);
    const storage = await page.evaluate(() =>
      JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, cookie: document.cookie }),
    );
    expect(storage).not.toMatch(API_KEY);
    const cookies = await context.cookies();
    expect(cookies.map((c) => c.name)).toEqual(['likeness_console']);
    expect(cookies[0]).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    expect(cookies[0]!.value).not.toMatch(API_KEY);
    // The page's script cannot read the sign-in cookie.
    expect(await page.evaluate(() => document.cookie)).toBe('');
    // Nothing came from a CDN: every request went to this service, its asset URL, or the session's LiveKit server.
    const livekit = new URL(service.services.livekit.url.replace(/^ws/, 'http')).host;
    const ours = (url: string) =>
      url.startsWith(service.url) || url.startsWith(service.config.assetsUrl) || new URL(url).host === livekit;
    const foreign = requested.filter((url) => /^(https?|wss?):/.test(url) && !ours(url));
    expect(requested.length).toBeGreaterThan(5);
    expect(foreign).toEqual([]);
  });

  test('on a desktop viewport the Talk page streams landscape; no console errors anywhere', async () => {
    const desktop = await browser.newPage({ viewport: DESKTOP, baseURL: service.url });
    await desktop.page.goto('/console');
    // Keyboard only: the email field has focus, Tab reaches the password, Enter signs in.
    await desktop.page.waitForSelector('#sign-in-form');
    expect(await desktop.page.evaluate(() => document.activeElement?.id)).toBe('email');
    await desktop.page.keyboard.type('ada@example.com');
    await desktop.page.keyboard.press('Tab');
    expect(await desktop.page.evaluate(() => document.activeElement?.id)).toBe('password');
    await desktop.page.keyboard.type('a long enough password');
    await desktop.page.keyboard.press('Enter');
    await desktop.page.waitForSelector('#account-email');
    expect(await usability(desktop.page)).toEqual({ unlabelled: [], overflow: 0 });
    await desktop.page.goto('/console#/talk');
    await desktop.page.selectOption('#talk-form-factor', 'desktop');
    await desktop.page.click('#start-talk');
    expect(await videoPlays(desktop.page)).toEqual({ width: 960, height: 540 });
    const layout = await conversationLayout(desktop.page);
    expect([layout.video, layout.mute, layout.end].map((part) => inside(part, layout.screen))).toEqual([
      true,
      true,
      true,
    ]);
    await screenshot(desktop.page, 'talk-desktop');
    await desktop.page.click('#end-session');
    await desktop.page.waitForSelector('#connection-state[data-state=disconnected]', { timeout: 15_000 });
    // The sessions' column names and the stats' ("Replies") wrap between words only.
    await desktop.page.goto('/console#/sessions');
    await desktop.page.locator('[data-testid=view-transcript]').first().click();
    await desktop.page.waitForSelector('#session-metrics');
    expect({
      sessions: await headerWordsSplit(desktop.page, '#sessions-table'),
      stats: await headerWordsSplit(desktop.page, '#session-metrics'),
    }).toEqual({ sessions: [], stats: [] });
    // Today's bar in the usage chart is drawn whole, with room between it and the plot's edge.
    await desktop.page.goto('/console#/credits');
    await desktop.page.waitForSelector('#usage-chart canvas');
    const bar = await usageChartLastBar(desktop.page);
    expect(bar.found).toBe(true);
    expect(bar.barRight - bar.barLeft).toBeGreaterThan(4);
    expect(bar.plotRight - bar.barRight).toBeGreaterThanOrEqual(2);
    // livekit-client logs transport events of its own (with their room context); anything else,
    // a 401 before signing in included, is the page's fault.
    const unexpected = (errors: string[]) => errors.filter((e) => !/\{room: ses_/.test(e));
    expect(unexpected(desktop.errors)).toEqual([]);
    expect(unexpected(visitor.errors)).toEqual([]);
    await desktop.close();
  }, 90_000);

  test('Talk shows the insufficient_credits notice when the credits run out, and the session ends', async () => {
    const low = await browser.newPage({ viewport: PHONE, baseURL: service.url });
    const { page } = low;
    await page.goto('/console');
    await page.fill('#email', 'low@example.com');
    await page.fill('#password', 'a long enough password');
    await page.click('#sign-up');
    const key = (await (await page.waitForSelector('#api-key-once')).textContent())!.trim();
    await page.click('#continue');
    const created = await fetch(`${service.url}/v1/identities`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: await identityForm({ language: 'en' }),
    });
    expect(created.status).toBe(200);
    // Leave credits for two minutes of avatar time.
    const { account } = (await page.evaluate(async () => (await fetch('/console/api/me')).json())) as {
      account: { account_id: string; balance: number };
    };
    await service.services.ledger.charge(service.services.database.db, {
      accountId: account.account_id,
      amount: account.balance - 20,
      kind: 'adjustment',
      reference: 'test:drain',
    });
    await page.goto('/console#/talk');
    await page.waitForSelector('#talk-form');
    await page.click('#start-talk');
    await page.waitForSelector('#connection-state[data-state=connected]', { timeout: 30_000 });
    await page.waitForSelector('#notice[data-type=insufficient_credits]', { timeout: 30_000 });
    expect(await page.textContent('#notice')).toContain('credits ran out');
    await page.waitForSelector('#connection-state[data-state=disconnected]', { timeout: 15_000 });
    await screenshot(page, 'talk-insufficient-credits');
    await low.close();
  }, 90_000);

  test('the example web client joins from the query string: the avatar plays with one audio element', async () => {
    const identity = (await (
      await fetch(`${service.url}/v1/identities`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}` },
        body: await identityForm({ language: 'en' }),
      })
    ).json()) as { identity_id: string };
    const started = (await (
      await fetch(`${service.url}/v1/sessions/start`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ identity_id: identity.identity_id, visual_awareness: false, form_factor: 'phone' }),
      })
    ).json()) as { room_name: string; token: string; rtc_url: string };
    const example = await browser.newPage({ viewport: PHONE, baseURL: service.url });
    const query = new URLSearchParams({ url: started.rtc_url, token: started.token });
    await example.page.goto(`/examples/web-client/?${query}`);
    await example.page.waitForSelector('#connection-state[data-state=connected]', { timeout: 30_000 });
    await videoPlays(example.page);
    await eventually(
      async () => {
        const audio = await audioElements(example.page);
        return audio.length === 1 && !audio[0]!.paused && audio[0]!.tracks.join() === 'live';
      },
      15_000,
      'the avatar audio playing',
    );
    expect(await example.page.locator('#camera-toggle').count()).toBe(0);
    // The agent's state and its captions (its words, as they are heard).
    await example.page.waitForSelector('#agent-state[data-state]:not([hidden])', { timeout: 30_000 });
    await example.page.waitForFunction(
      () =>
        Array.from(document.querySelectorAll('#transcript li'), (li) => li.textContent ?? '').some((text) =>
          /^Avatar: \S/.test(text),
        ),
      undefined,
      { timeout: 30_000 },
    );
    await screenshot(example.page, 'example-web-client');
    await example.page.click('#end-session');
    await example.page.waitForSelector('#connection-state[data-state=disconnected]', { timeout: 15_000 });
    expect(example.errors.filter((e) => !/\{room: ses_/.test(e))).toEqual([]);
    await example.close();
  }, 90_000);

  test('edit an identity (a new name and a voice sample: a retrain), then delete it', async () => {
    const { page } = visitor;
    const sample = await speechWav(
      'Hello, I am Ada. I like to walk along the river in the evening, and I can tell you about every museum in the city.',
      { pauseSeconds: 0.3 },
    );
    await page.goto('/console#/sessions');
    await page.goto('/console#/identities');
    const card = page.locator('li[data-testid=identity-card]', { hasText: 'Ada' }).first();
    const identityId = (await card.getAttribute('data-identity-id'))!;
    await card.locator('[data-testid=edit-identity]').click();
    await page.fill('#edit-identity-name', 'Ada Lovelace');
    await page.setInputFiles('#edit-identity-audio', sample);
    await page.click('#save-identity');
    await eventually(
      async () => {
        const identity = (await (
          await fetch(`${service.url}/v1/identities/${identityId}`, { headers: { authorization: `Bearer ${apiKey}` } })
        ).json()) as { name: string; audio: string | null; status: string };
        return identity.name === 'Ada Lovelace' && identity.audio !== null && identity.status === 'ready';
      },
      30_000,
      'the retrained identity',
    );
    // The card, not its editor (the editor sits in the same li, which keeps its old status while open):
    // the page shows the new name once its own poll has seen the retrain end.
    await page.waitForSelector(`li[data-identity-id="${identityId}"][data-status=ready] h3:text-is("Ada Lovelace")`, {
      timeout: 30_000,
    });
    expect(await page.locator(`li[data-identity-id="${identityId}"] #edit-identity-form`).count()).toBe(0);
    await page.locator(`li[data-identity-id="${identityId}"] [data-testid=delete-identity]`).click();
    await page.click('#confirm-accept');
    await page.waitForSelector(`li[data-identity-id="${identityId}"]`, { state: 'detached' });
    expect(
      (await fetch(`${service.url}/v1/identities/${identityId}`, { headers: { authorization: `Bearer ${apiKey}` } }))
        .status,
    ).toBe(404);
  }, 90_000);

  // Last: it changes Ada's password.
  test('the account page changes the password: a wrong current one is shown at its field; this browser stays signed in', async () => {
    const { page } = visitor;
    await page.goto('/console#/keys');
    await page.click('#account-email');
    await page.waitForSelector('#password-form');
    expect(await page.textContent('#account-page-email')).toBe('ada@example.com');
    expect(await usability(page)).toEqual({ unlabelled: [], overflow: 0 });
    await page.fill('#current-password', 'not my password');
    await page.fill('#new-password', 'a brand new password');
    await page.click('#change-password');
    await page.waitForSelector('#current-password-error');
    expect(await page.textContent('#current-password-error')).toContain('The current password is wrong');
    await page.fill('#current-password', 'a long enough password');
    await page.click('#change-password');
    await page.waitForFunction(() =>
      document.querySelector('#password-changed')?.textContent?.includes('Password changed'),
    );
    await screenshot(page, 'account');
    // Still signed in, with the new session's CSRF token: a change goes through.
    await page.goto('/console#/keys');
    await page.fill('#key-name', 'after the new password');
    await page.click('#create-key');
    await page.waitForSelector('#api-key-once');
    await page.click('#continue');
    // The new password is the one that signs in.
    const signIn = (password: string) =>
      fetch(`${service.url}/console/api/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'ada@example.com', password }),
      });
    expect((await signIn('a brand new password')).status).toBe(200);
  }, 60_000);
});
