// A voice sample recorded in a browser (WebM/Opus from Chrome and Firefox, Ogg/Opus) through the
// console in real headless Chromium: the page decodes it and uploads WAV, so the identity gets
// the voice; the API itself keeps the specification's allowed types and answers such a file 415
// (docs/decisions.md). The recordings are made with ffmpeg from espeak-ng speech.
import { beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { speechWav } from '../support/browser.ts';
import { file, type IdentityBody, identityForm } from '../support/forms.ts';
import { waitForStatus } from '../support/service.ts';
import { consoleInChromium } from './support.ts';

const ASTRONAUT = join(import.meta.dir, '../fixtures/astronaut.png');

/** The speech encoded as a browser's recorder would: Opus in WebM or in Ogg. */
async function recording(wav: string, container: 'webm' | 'ogg'): Promise<string> {
  const out = wav.replace(/\.wav$/, `.${container}`);
  const ffmpeg = Bun.spawn(['ffmpeg', '-y', '-loglevel', 'error', '-i', wav, '-c:a', 'libopus', '-b:a', '32k', out], {
    stderr: 'pipe',
  });
  expect(await ffmpeg.exited).toBe(0);
  return out;
}

describe('a voice recorded in a browser, through the console', () => {
  const suite = consoleInChromium({ email: 'rosa@example.com' });
  let webm = '';
  let ogg = '';

  beforeAll(async () => {
    const wav = await speechWav(
      'Hello, this is my voice. I am recording a short sample for my avatar, so that it can speak like me.',
      { pauseSeconds: 0.5 },
    );
    webm = await recording(wav, 'webm');
    ogg = await recording(
      await speechWav('And this is a second recording, made a little later, with other words in it.', {
        pauseSeconds: 0.5,
      }),
      'ogg',
    );
  }, 60_000);

  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${suite.service.url}${path}`, { ...init, headers: { authorization: `Bearer ${suite.apiKey}` } });

  test('the API refuses WebM/Opus with 415, as the specification allows only WAV, MP3 and MP4 audio', async () => {
    const answer = await api('/v1/identities', {
      method: 'POST',
      body: await identityForm({
        audio: file(new Uint8Array(await Bun.file(webm).arrayBuffer()), 'voice.webm', 'audio/webm'),
      }),
    });
    expect(answer.status).toBe(415);
  });

  test('create with a WebM recording, then retrain with an Ogg one: the page uploads WAV and the identity has the voice', async () => {
    const { page } = suite.visitor;
    await page.goto('/console#/identities');
    await page.fill('#identity-name', 'Rosa');
    await page.fill('#identity-prompt', 'You are Rosa, a baker.');
    await page.selectOption('#identity-language', 'en');
    await page.setInputFiles('#identity-image', ASTRONAUT);
    await page.setInputFiles('#identity-audio', webm);
    await page.click('#create-identity');
    await page.waitForSelector('li[data-testid=identity-card][data-status=ready]', { timeout: 30_000 });
    const [listed] = (await (await api('/v1/identities')).json()) as { identity_id: string }[];
    const created = (await (await api(`/v1/identities/${listed!.identity_id}`)).json()) as IdentityBody;
    expect(created.audio).not.toBeNull();
    const stored = await fetch(created.audio!);
    expect(stored.headers.get('content-type')).toBe('audio/wav');
    const first = new Uint8Array(await stored.arrayBuffer());
    // About the recording's length (5–9 s of 24 kHz mono 16-bit), not an empty file.
    expect(first.length).toBeGreaterThan(5 * 48_000);

    await page.click('[data-testid=edit-identity]');
    await page.setInputFiles('#edit-identity-audio', ogg);
    await page.click('#save-identity');
    await waitForStatus(
      { accountId: '', apiKey: suite.apiKey, call: (method, path) => api(path, { method }) },
      created.identity_id,
      'ready',
    );
    const retrained = await eventuallyNewAudio(created.audio!);
    expect(retrained.headers.get('content-type')).toBe('audio/wav');
  }, 60_000);

  /** The identity's audio once the retrain replaced it. */
  async function eventuallyNewAudio(before: string): Promise<Response> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const [listed] = (await (await api('/v1/identities')).json()) as { identity_id: string }[];
      const identity = (await (await api(`/v1/identities/${listed!.identity_id}`)).json()) as IdentityBody;
      if (identity.audio && new URL(identity.audio).pathname !== new URL(before).pathname) return fetch(identity.audio);
      if (Date.now() > deadline)
        throw new Error(
          `the retrain did not replace the audio (detail: ${JSON.stringify((identity as { detail?: unknown }).detail)})`,
        );
      await Bun.sleep(200);
    }
  }
});
