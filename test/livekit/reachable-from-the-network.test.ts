// `npm start` with the embedded defaults serves visitors on other machines (docs/api.md#in-room):
// PUBLIC_URL and rtc_url name the host's network address, LiveKit's signalling comes through
// the service's own /rtc, and media go to the host's UDP ports (ICE over TCP beside them).
// Every visitor here joins through the machine's first non-loopback IPv4 address, never
// 127.0.0.1: an rtc-node client over plain HTTP, and the console in Chromium over the HTTPS
// listener with its self-made certificate (a phone's browser lets a page use the microphone
// only on a secure origin): a spoken question through the fake microphone, the answer in the
// live transcript.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AudioStream, type RemoteTrack, TrackKind } from '@livekit/rtc-node';
import { hostAddress } from '../../src/config.ts';
import { freeTcpPort, freeUdpRange } from '../../src/livekit/local-ports.ts';
import { createAstronaut, FrameLog, startSession } from '../avatar/support.ts';
import { launchBrowser, speechWav, type TestBrowser } from '../support/browser.ts';
import { sharedProviderFakes } from '../support/preload.ts';
import { startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { postSessionStart } from '../support/session-start.ts';
import { eventually, joinAsVisitor } from '../support/visitor.ts';

const ASTRONAUT = join(import.meta.dir, '../fixtures/astronaut.png');
const address = hostAddress();

describe('reachable from the network with the embedded defaults', () => {
  let service: TestService;
  let account: TestAccount;
  let base = '';
  let secureBase = '';
  let udp = { start: 0, end: 0 };

  beforeAll(async () => {
    if (!address) throw new Error('this machine has no non-loopback IPv4 address to test with');
    // The defaults but for the ports: free ones, as another suite may run a LiveKit too.
    udp = await freeUdpRange(address, 40);
    const tcp = await freeTcpPort('0.0.0.0');
    service = await startTestService('pglite', {
      livekit: 'local',
      agent: true,
      env: {
        HOST: '0.0.0.0',
        LIVEKIT_UDP_PORTS: `${udp.start}-${udp.end}`,
        LIVEKIT_TCP_PORT: String(tcp),
        TLS_PORT: String(await freeTcpPort('0.0.0.0')),
      },
    });
    base = `http://${address}:${service.config.port}`;
    secureBase = `https://${address}:${service.config.tls!.port}`;
    account = await service.account({ credits: 100_000 });
  }, 120_000);
  afterAll(() => service?.stop());

  test("PUBLIC_URL, rtc_url and asset URLs name the host's address; LiveKit listens for signalling on loopback only", async () => {
    expect(service.config.publicUrl).toBe(base);
    const yaml = readFileSync(join(service.dataDir, 'livekit', 'livekit.yaml'), 'utf8');
    expect(yaml).toContain('bind_addresses: ["127.0.0.1"]');
    expect(yaml).toContain(`node_ip: "${address}"`);
    expect(yaml).toContain(`port_range_start: ${udp.start}`);
    expect(yaml).toContain(`tcp_port: ${service.config.livekit.media.tcpPort}`);
    expect(yaml).not.toContain('enable_loopback_candidate');
    const identity = await createAstronaut(account, { language: 'en' });
    expect(identity.image.startsWith(`${base}/assets/`)).toBe(true);
    // The stored photo is served at that address.
    expect((await fetch(identity.image)).status).toBe(200);
    const session = await startSession(account, { identity_id: identity.identity_id });
    expect(session.rtc_url).toBe(`ws://${address}:${service.config.port}`);
    await account.call('POST', `/v1/sessions/${session.room_name}/end`);
  }, 60_000);

  test("an rtc-node visitor joins through the host's address and receives the avatar's video and voice", async () => {
    const identity = await createAstronaut(account, { language: 'en' });
    const session = await startSession(account, { identity_id: identity.identity_id, form_factor: 'phone' });
    let video: FrameLog | undefined;
    let audioFrames = 0;
    const visitor = await joinAsVisitor(session, {
      onTrack: (track: RemoteTrack) => {
        if (track.kind === TrackKind.KIND_VIDEO) video = new FrameLog(track);
        else {
          const reader = new AudioStream(track).getReader();
          void (async () => {
            while (!(await reader.read()).done) audioFrames++;
          })().catch(() => undefined);
        }
      },
    });
    try {
      await eventually(() => (video?.frames.length ?? 0) >= 50, 30_000, '50 avatar frames');
      await eventually(() => audioFrames >= 50, 15_000, 'the avatar audio');
      expect(video!.frames[0]).toMatchObject({ width: 540, height: 960 });
      // The visitor is counted as joined: the agent saw it arrive and minutes are billed.
      await eventually(
        async () =>
          (
            (await (await account.call('GET', `/v1/sessions/${session.room_name}`)).json()) as {
              joined_at: string | null;
            }
          ).joined_at,
        15_000,
        'the join',
      );
    } finally {
      video?.close();
      await visitor.leave();
      await account.call('POST', `/v1/sessions/${session.room_name}/end`);
    }
  }, 90_000);

  test("the /rtc validate probe is LiveKit's own answer: 401 for a bad token, 200 for a good one", async () => {
    const identity = await createAstronaut(account, { language: 'en' });
    const session = await startSession(account, { identity_id: identity.identity_id });
    const good = await fetch(`${base}/rtc/validate?access_token=${session.token}`);
    expect(good.status).toBe(200);
    const bad = await fetch(`${base}/rtc/validate?access_token=${session.token.slice(0, -4)}AAAA`);
    expect(bad.status).toBe(401);
    // A plain GET of the signalling path is not a WebSocket: LiveKit's refusal passes through.
    expect((await fetch(`${base}/rtc`)).status).toBeGreaterThanOrEqual(400);
    await account.call('POST', `/v1/sessions/${session.room_name}/end`);
  }, 30_000);

  describe('the console in Chromium, opened at the host address over HTTPS', () => {
    const fakes = sharedProviderFakes();
    let browser: TestBrowser;
    beforeAll(async () => {
      // A certificate error flag for the self-made certificate; nothing makes an insecure origin count as secure.
      // The question loops with long pauses, so that an answer can be heard out between two.
      browser = await launchBrowser({
        audioFile: await speechWav('How tall is the Eiffel Tower?', { pauseSeconds: 8 }),
        args: ['--ignore-certificate-errors'],
      });
    });
    afterAll(() => browser?.close());

    test('signs up, creates an identity, and Talk hears a spoken question and shows the answer, signalling over wss through /rtc', async () => {
      fakes.openai.respond(() => 'About three hundred metres.');
      const { page, errors } = await browser.newPage({ baseURL: secureBase, viewport: { width: 390, height: 844 } });
      const sockets: string[] = [];
      page.on('websocket', (socket) => sockets.push(socket.url()));
      await page.goto('/console');
      expect(await page.evaluate(() => window.isSecureContext)).toBe(true);
      await page.fill('#email', 'remote@example.com');
      await page.fill('#password', 'a long enough password');
      await page.click('#sign-up');
      await page.waitForSelector('#api-key-once');
      await page.click('#continue');
      await page.goto('/console#/identities');
      await page.fill('#identity-name', 'Ada');
      await page.fill('#identity-prompt', 'You are Ada.');
      await page.selectOption('#identity-language', 'en');
      await page.setInputFiles('#identity-image', ASTRONAUT);
      await page.click('#create-identity');
      await page.waitForSelector('li[data-testid=identity-card][data-status=ready]', { timeout: 30_000 });
      // The card's photo loads over HTTPS from the host address too (no mixed content).
      await page.waitForFunction(
        () =>
          Array.from(document.images).some(
            (image) => image.complete && image.naturalWidth > 0 && image.src.startsWith('https://'),
          ),
        undefined,
        { timeout: 10_000 },
      );
      await page.goto('/console#/talk');
      await page.waitForSelector('#talk-form');
      await page.click('#start-talk');
      await page.waitForSelector('#connection-state[data-state=connected]', { timeout: 30_000 });
      await page.waitForFunction(
        () => {
          const video = document.querySelector<HTMLVideoElement>('#avatar-video');
          return !!video && video.videoWidth > 0 && video.currentTime > 1;
        },
        undefined,
        { timeout: 30_000 },
      );
      // The fake microphone asks; the agent's answer appears in the live transcript.
      const answered = await page
        .waitForFunction(
          () =>
            Array.from(document.querySelectorAll('#transcript li.turn-agent .text')).some((line) =>
              (line.textContent ?? '').includes('About three hundred metres'),
            ),
          undefined,
          { timeout: 45_000 },
        )
        .then(
          () => true,
          () => false,
        );
      expect({
        answered,
        transcript: await page.evaluate(() => document.querySelector('#transcript')?.textContent ?? '(no transcript)'),
      }).toMatchObject({ answered: true });
      expect(sockets.length).toBeGreaterThan(0);
      for (const url of sockets) expect(url.startsWith(`wss://${address}:${service.config.tls!.port}/rtc`)).toBe(true);
      await page.click('#end-session');
      await page.waitForSelector('#connection-state[data-state=disconnected]', { timeout: 15_000 });
      // livekit-client logs its room.
      expect(errors.filter((e) => !/\{room: ses_/.test(e))).toEqual([]);
    }, 150_000);
  });
});

test("behind TLS (PUBLIC_URL https://…), a started session's rtc_url is wss:// on PUBLIC_URL's host and port", async () => {
  const service = await startTestService('pglite', {
    livekit: 'local',
    env: { PUBLIC_URL: 'https://likeness.example:8443' },
  });
  try {
    const account = await service.account({ credits: 1000 });
    const response = await postSessionStart(account, { language: 'en' });
    expect(response.status).toBe(200);
    const session = (await response.json()) as { rtc_url: string; room_name: string };
    expect(session.rtc_url).toBe('wss://likeness.example:8443');
    await account.call('POST', `/v1/sessions/${session.room_name}/end`);
  } finally {
    await service.stop();
  }
}, 60_000);
