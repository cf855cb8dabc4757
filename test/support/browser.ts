// A real headless Chromium for tests: Debian's chromium (the bootstrap installs it and
// exports LIKENESS_CHROMIUM), driven by playwright-core. Its camera is Chromium's fake
// device (a moving test pattern) and its microphone plays a WAV file, e.g. a phrase from
// speech(), looped, so a page's getUserMedia works with no prompt and no hardware.
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { wavFile } from './fakes/speech.ts';
import { MIC_RATE, speech } from './voice.ts';

export const CHROMIUM_PATH = process.env.LIKENESS_CHROMIUM ?? '/usr/bin/chromium';

export interface LaunchOptions {
  /** A 16-bit PCM WAV the fake microphone plays (any rate); without it, Chromium's own beeps. */
  audioFile?: string;
  /** Play audioFile once, then silence, instead of looping it (default: loop). */
  loopAudio?: boolean;
  /** Extra Chromium switches. */
  args?: string[];
}

export interface PageOptions {
  viewport?: { width: number; height: number };
  /** Relative page.goto() URLs resolve against it. */
  baseURL?: string;
}

export interface TestPage {
  page: Page;
  context: BrowserContext;
  /** The page's console errors and uncaught exceptions, as they happen. */
  errors: string[];
  close(): Promise<void>;
}

export interface TestBrowser {
  browser: Browser;
  /** A page in a fresh context (own cookies and storage). */
  newPage(options?: PageOptions): Promise<TestPage>;
  close(): Promise<void>;
}

/**
 * Chromium switches for a page that captures media in a container with no devices. Playwright
 * adds its own: --headless, --no-sandbox (see launchBrowser), --disable-dev-shm-usage,
 * --enable-unsafe-swiftshader (WebGL renders on SwiftShader, no GPU needed) and --mute-audio
 * (nothing reaches a sound card; Web Audio inside the page still sees the samples).
 */
export function chromiumArgs({ audioFile, loopAudio = true, args = [] }: LaunchOptions = {}): string[] {
  return [
    // Without it getUserMedia fails with NotFoundError (no devices).
    '--use-fake-device-for-media-stream',
    // Without it getUserMedia fails with NotAllowedError (nobody to answer the prompt).
    '--use-fake-ui-for-media-stream',
    // The file loops unless the path ends with %noloop.
    ...(audioFile ? [`--use-file-for-fake-audio-capture=${audioFile}${loopAudio ? '' : '%noloop'}`] : []),
    // Unmuted <audio>/<video> and AudioContext start without a click.
    '--autoplay-policy=no-user-gesture-required',
    // /dev/shm in a container is often 64 MB (Playwright passes it too; kept if it stops).
    '--disable-dev-shm-usage',
    ...args,
  ];
}

/**
 * Launches headless Chromium with fake media devices. The sandbox is off (Playwright then
 * passes --no-sandbox): Chromium refuses to sandbox as root, and a container rarely allows
 * the user namespaces it needs otherwise. Tests load only their own local pages.
 */
export async function launchBrowser(options: LaunchOptions = {}): Promise<TestBrowser> {
  const shared = Object.keys(options).length === 0;
  const browser = shared ? await sharedBrowser() : await startChromium(options);
  const pages = new Set<TestPage>();
  return {
    browser,
    async newPage({ viewport = { width: 1280, height: 720 }, baseURL }: PageOptions = {}) {
      const context = await browser.newContext({ viewport, baseURL });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text());
      });
      page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`));
      const testPage: TestPage = {
        page,
        context,
        errors,
        async close() {
          pages.delete(testPage);
          await context.close();
        },
      };
      pages.add(testPage);
      return testPage;
    },
    async close() {
      await Promise.allSettled([...pages].map((testPage) => testPage.close()));
      // The shared Chromium stays for the process's next suite (its contexts are closed above).
      if (!shared) await browser.close();
    },
  };
}

function startChromium(options: LaunchOptions): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    chromiumSandbox: false,
    args: chromiumArgs(options),
  });
}

/**
 * One Chromium per test process for the suites that launch it with the defaults (a dozen): each
 * suite's pages are in contexts of their own, so they share no cookies or storage, and a suite
 * is spared a launch (1–2 s of CPU). It ends with the process (its pipe closes); a crashed one
 * is started again.
 */
let sharedChromium: Promise<Browser> | undefined;
async function sharedBrowser(): Promise<Browser> {
  const running = await sharedChromium?.catch(() => undefined);
  if (running?.isConnected()) return running;
  sharedChromium = startChromium({});
  return sharedChromium;
}

// Fake-microphone files live in one folder per test process. `bun test` runs no exit
// handlers, so a folder is removed by the next process that makes one, once its owner is gone.
const WAV_DIR_PREFIX = 'likeness-browser-';
let wavDir: string | undefined;
let wavCount = 0;

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function wavFolder(): string {
  if (wavDir) return wavDir;
  for (const entry of readdirSync(tmpdir())) {
    const owner = entry.startsWith(WAV_DIR_PREFIX) ? Number(entry.slice(WAV_DIR_PREFIX.length)) : NaN;
    if (Number.isInteger(owner) && owner !== process.pid && !processAlive(owner)) {
      rmSync(join(tmpdir(), entry), { recursive: true, force: true });
    }
  }
  wavDir = join(tmpdir(), `${WAV_DIR_PREFIX}${process.pid}`);
  mkdirSync(wavDir, { recursive: true });
  return wavDir;
}

/** Writes 16-bit mono PCM as a WAV file. */
export async function writeWav(path: string, samples: Int16Array, sampleRate: number): Promise<string> {
  await writeFile(path, wavFile({ samples, sampleRate }));
  return path;
}

/**
 * A WAV of `text` spoken by speech() (espeak-ng, or `voice: 'piper'`) for launchBrowser's
 * audioFile, with `pauseSeconds` of silence after it (the gap between loops).
 */
export async function speechWav(
  text: string,
  { voice, pauseSeconds = 0.5 }: { voice?: string; pauseSeconds?: number } = {},
): Promise<string> {
  const spoken = await speech(text, { voice });
  const samples = new Int16Array(spoken.length + Math.round(pauseSeconds * MIC_RATE));
  samples.set(spoken);
  return writeWav(join(wavFolder(), `speech-${wavCount++}.wav`), samples, MIC_RATE);
}
