// The browser tests' Chromium, for real: Debian's chromium driven by playwright-core, with
// a fake camera and a fake microphone that plays a spoken phrase from a WAV file, on a
// page served over plain http from loopback (as the console is in the tests).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { launchBrowser, speechWav, type TestBrowser } from '../support/browser.ts';

const PAGE = '<!doctype html><meta charset="utf-8"><title>media</title><video autoplay muted playsinline></video>';

describe('headless Chromium', () => {
  let server: ReturnType<typeof Bun.serve>;
  let browser: TestBrowser;

  beforeAll(async () => {
    server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch(request) {
        const { pathname } = new URL(request.url);
        if (pathname === '/set-cookie') {
          return new Response('set', { headers: { 'set-cookie': 'x=1; HttpOnly; Secure; SameSite=Strict; Path=/' } });
        }
        if (pathname === '/cookie') return new Response(request.headers.get('cookie') ?? '');
        return new Response(PAGE, { headers: { 'content-type': 'text/html; charset=utf-8' } });
      },
    });
    // No pause after the phrase: its first second, where the analysis looks, is speech.
    browser = await launchBrowser({
      audioFile: await speechWav('hello from the fake microphone', { pauseSeconds: 0 }),
    });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop(true);
  });

  test('getUserMedia gets the fake camera and the WAV file as the microphone, on http://127.0.0.1', async () => {
    const { page, errors, close } = await browser.newPage();
    await page.goto(`http://127.0.0.1:${server.port}/`);
    // getUserMedia exists only in a secure context; loopback http is one.
    expect(await page.evaluate(() => window.isSecureContext)).toBe(true);

    const media = await page.evaluate(async () => {
      const stream = await navigator.mediaDevices.getUserMedia({ audio: true, video: true });
      const audioTracks = stream.getAudioTracks();
      const videoTracks = stream.getVideoTracks();
      const settingsWidth = videoTracks[0]?.getSettings().width ?? 0; // read while live: a stopped track has none

      // The microphone's loudness every ~20 ms for its first second (the capture starts
      // the file from its beginning). Chromium's own fake microphone, what plays when the
      // file is not used, is silence with a short beep twice a second: loud in ~10 % of
      // the frames, where the phrase is loud in most.
      const audio = new AudioContext();
      const analyser = audio.createAnalyser();
      analyser.fftSize = 1024;
      audio.createMediaStreamSource(stream).connect(analyser);
      const samples = new Float32Array(analyser.fftSize);
      const frames: number[] = [];
      for (const started = performance.now(); performance.now() - started < 1000; ) {
        analyser.getFloatTimeDomainData(samples);
        let sum = 0;
        for (const sample of samples) sum += sample * sample;
        frames.push(sum / samples.length);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await audio.close();

      // The camera: Chromium's moving test pattern, playing in a <video>.
      const video = document.querySelector('video')!;
      video.srcObject = stream;
      await video.play();
      const canvas = document.createElement('canvas');
      canvas.width = video.videoWidth;
      canvas.height = video.videoHeight;
      const context = canvas.getContext('2d')!;
      const snapshot = () => {
        context.drawImage(video, 0, 0);
        return context.getImageData(0, 0, canvas.width, canvas.height).data;
      };
      const first = snapshot();
      await new Promise((resolve) => setTimeout(resolve, 300));
      const second = snapshot();
      let changed = 0;
      for (let i = 0; i < first.length; i += 4) if (first[i] !== second[i]) changed++;

      for (const track of stream.getTracks()) track.stop();
      return {
        audioTracks: audioTracks.length,
        videoTracks: videoTracks.length,
        rms: Math.sqrt(frames.reduce((a, b) => a + b, 0) / frames.length),
        loudFraction: frames.filter((meanSquare) => Math.sqrt(meanSquare) > 0.02).length / frames.length,
        frames: frames.length,
        settingsWidth,
        videoWidth: video.videoWidth,
        videoHeight: video.videoHeight,
        changedPixels: changed,
      };
    });

    expect(media.audioTracks).toBe(1);
    expect(media.videoTracks).toBe(1);
    expect(media.frames).toBeGreaterThan(10);
    expect(media.rms).toBeGreaterThan(0.03);
    expect(media.loudFraction).toBeGreaterThan(0.4);
    expect(media.settingsWidth).toBeGreaterThan(0);
    expect(media.videoWidth).toBeGreaterThan(0);
    expect(media.videoHeight).toBeGreaterThan(0);
    expect(media.changedPixels).toBeGreaterThan(0); // the pattern moves: frames are live
    expect(errors).toEqual([]);
    await close();
  });

  test("a page's console errors and uncaught exceptions are collected", async () => {
    const { page, errors, close } = await browser.newPage();
    await page.goto(`http://127.0.0.1:${server.port}/`);
    await page.evaluate(() => {
      console.error('logged error');
      setTimeout(() => {
        throw new Error('thrown error');
      });
    });
    await page.waitForEvent('pageerror');
    expect(errors).toEqual(['logged error', 'uncaught: thrown error']);
    await close();
  });

  // The console's session cookie is Secure even on plain-http loopback: Chromium treats
  // 127.0.0.1 and localhost as secure origins, for cookies as for getUserMedia.
  for (const host of ['127.0.0.1', 'localhost']) {
    test(`a Secure cookie set by http://${host} is kept and sent back`, async () => {
      const { page, context, close } = await browser.newPage();
      const origin = `http://${host}:${server.port}`;
      await page.goto(`${origin}/set-cookie`);
      expect(await page.evaluate(() => window.isSecureContext)).toBe(true);
      await page.goto(`${origin}/cookie`);
      expect(await page.textContent('body')).toBe('x=1');
      expect(await context.cookies(origin)).toEqual([
        {
          name: 'x',
          value: '1',
          domain: host,
          path: '/',
          expires: -1,
          httpOnly: true,
          secure: true,
          sameSite: 'Strict',
        },
      ]);
      await close();
    });
  }
});
