// What the console suites share: a console visitor at the HTTP level (keeps the sign-in cookie
// and the CSRF token the way the browser page does, so the console API can be tested without a
// browser), and for the Chromium suites, their start (a page signed up to the console),
// screenshots and a page's usability check.
import { afterAll, beforeAll, expect } from 'bun:test';
import { mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { launchBrowser, type TestBrowser, type TestPage } from '../support/browser.ts';
import { type Engine, startTestService, type TestService, type TestServiceOptions } from '../support/service.ts';

export interface ConsoleAccountBody {
  account: { account_id: string; email: string; balance: number };
  csrf_token: string;
  api_key?: { key_id: string; api_key: string; name: string | null; test: boolean };
}

export class ConsoleClient {
  cookie: string | undefined;
  csrf: string | undefined;
  /** The last Set-Cookie header the service sent. */
  lastSetCookie: string | null = null;

  constructor(readonly service: TestService) {}

  async call(
    method: string,
    path: string,
    init: { json?: unknown; body?: BodyInit; headers?: Record<string, string>; csrf?: string | null } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { ...init.headers };
    if (this.cookie) headers.cookie = this.cookie;
    const csrf = init.csrf === undefined ? this.csrf : init.csrf;
    if (csrf && method !== 'GET') headers['x-csrf-token'] = csrf;
    let body = init.body;
    if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.json);
    }
    const response = await fetch(`${this.service.url}${path}`, { method, headers, body, redirect: 'manual' });
    const setCookie = response.headers.get('set-cookie');
    if (setCookie) {
      this.lastSetCookie = setCookie;
      const [pair] = setCookie.split(';');
      this.cookie = /=$/.test(pair!) ? undefined : pair;
    }
    return response;
  }

  async signUp(email: string, password = 'correct horse battery'): Promise<ConsoleAccountBody> {
    const response = await this.call('POST', '/console/api/sign-up', { json: { email, password } });
    if (response.status !== 201) throw new Error(`sign-up answered ${response.status}: ${await response.text()}`);
    const body = (await response.json()) as ConsoleAccountBody;
    this.csrf = body.csrf_token;
    return body;
  }

  async signIn(email: string, password: string): Promise<Response> {
    const response = await this.call('POST', '/console/api/sign-in', { json: { email, password } });
    if (response.status === 200) this.csrf = ((await response.clone().json()) as ConsoleAccountBody).csrf_token;
    return response;
  }
}

let counter = 0;
export function uniqueEmail(): string {
  return `console${++counter}-${crypto.randomUUID().slice(0, 8)}@example.com`;
}

/**
 * docs/console when UPDATE_SCREENSHOTS=1 (then commit them); otherwise a temporary folder, so a
 * test run leaves the checkout clean but still takes every screenshot.
 */
const SCREENSHOTS =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? join(import.meta.dir, '../../docs/console')
    : join(tmpdir(), `likeness-screenshots-${process.pid}`);

/** A full-page PNG of `page` under the screenshots folder. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** After a suite: the temporary screenshots go (committed ones stay). */
export function removeScreenshots(): void {
  if (process.env.UPDATE_SCREENSHOTS !== '1') rmSync(SCREENSHOTS, { recursive: true, force: true });
}

/**
 * What a phone user or a keyboard user would trip on: form controls without a label, and a
 * page wider than the viewport.
 */
export async function usability(page: Page): Promise<{ unlabelled: string[]; overflow: number }> {
  return page.evaluate(() => {
    const controls = Array.from(
      document.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>('input, select, textarea'),
    );
    const unlabelled = controls
      .filter((c) => c.type !== 'hidden' && !c.hidden && (c.labels?.length ?? 0) === 0 && !c.getAttribute('aria-label'))
      .map((c) => c.id || c.name || c.outerHTML.slice(0, 60));
    return { unlabelled, overflow: document.documentElement.scrollWidth - window.innerWidth };
  });
}

/** Signs up a new account on the console's sign-in page; returns the API key it showed once. */
export async function signUpInBrowser(page: Page, email: string): Promise<string> {
  await page.goto('/');
  await page.waitForSelector('#sign-in-form');
  await page.fill('#email', email);
  await page.fill('#password', 'a long enough password');
  await page.click('#sign-up');
  const apiKey = (await (await page.waitForSelector('#api-key-once')).textContent())!.trim();
  await page.click('#continue');
  return apiKey;
}

export interface ConsoleInChromium {
  readonly service: TestService;
  /** The page signed up to the console, at `viewport`. */
  readonly visitor: TestPage;
  /** The API key the console showed once at sign-up. */
  readonly apiKey: string;
  /** A GET on the public API with `key` (the signed-up account's unless given), expected to answer 200. */
  read<T>(path: string, key?: string): Promise<T>;
}

/**
 * A console suite's start in Chromium: its beforeAll starts the service, opens a page in the
 * shared Chromium and signs `email` up there; its afterAll closes them and removes the temporary
 * screenshots. The fields are set once the beforeAll has run.
 */
export function consoleInChromium({
  email,
  engine = 'pglite',
  service: serviceOptions = {},
  viewport = { width: 390, height: 844 },
}: {
  email: string;
  engine?: Engine;
  service?: TestServiceOptions;
  viewport?: { width: number; height: number };
}): ConsoleInChromium {
  let browser: TestBrowser | undefined;
  const suite = {
    async read<T>(path: string, key = suite.apiKey): Promise<T> {
      const response = await fetch(`${suite.service.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
      expect(response.status).toBe(200);
      return (await response.json()) as T;
    },
  } as ConsoleInChromium & { service: TestService; visitor: TestPage; apiKey: string };
  beforeAll(async () => {
    suite.service = await startTestService(engine, serviceOptions);
    browser = await launchBrowser();
    suite.visitor = await browser.newPage({ viewport, baseURL: suite.service.url });
    suite.apiKey = await signUpInBrowser(suite.visitor.page, email);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await suite.service?.stop();
    removeScreenshots();
  });
  return suite;
}

/**
 * The signing secret the console shows once after adding a tool or a webhook
 * (`#<kind>-secret-once`): a `whsec_` secret, gone from the page once acknowledged.
 */
export async function secretShownOnce(page: Page, kind: 'tool' | 'webhook'): Promise<string> {
  const secret = (await (await page.waitForSelector(`#${kind}-secret-once`)).textContent())!.trim();
  expect(secret).toMatch(/^whsec_/);
  await page.click(`#${kind}-secret-done`);
  await page.waitForSelector(`#${kind}-secret-once`, { state: 'detached' });
  expect(await page.content()).not.toContain(secret);
  return secret;
}
