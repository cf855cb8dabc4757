// The console's Visitors page in real headless Chromium (issue 44 point 3), over a real LiveKit
// (no agent: each session's memory report is sent as its job would, with the report token from
// the dispatch): the list shows the account's visitors and no other account's; a visitor's facts
// by scope with their sessions; correcting them (edit, remove, add) is read back through the API,
// an untouched fact keeping its session; refused saves (an empty fact, 21 in one scope) say why
// at the row; forgetting asks first, then the visitor is 404 and off the list; a new account sees
// the empty state. `UPDATE_SCREENSHOTS=1` writes docs/console/visitors.png.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Static } from '@sinclair/typebox';
import type { VisitorResponse } from '../../src/visitors/contract.ts';
import { launchBrowser, type TestBrowser, type TestPage } from '../support/browser.ts';
import { type IdentityBody, identityForm } from '../support/forms.ts';
import { startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { json } from '../support/webhooks.ts';
import { removeScreenshots, screenshot, signUpInBrowser, usability } from './support.ts';

/** As GET /v1/visitors/{id} answers (its schema's type). */
type VisitorBody = Static<typeof VisitorResponse>;

const ZOFIA = 'zofia@example.com';
// `+` and `:` must survive the page's paths.
const TOM = 'tom+news@example.com';
const CRM = 'crm:42';

describe('the Visitors page in Chromium', () => {
  let service: TestService;
  let browser: TestBrowser;
  let visitor: TestPage;
  let account: TestAccount['call'];
  let stranger: TestAccount;
  let ada: IdentityBody;
  let bo: IdentityBody;
  /** Zofia's sessions: the first with Ada, the second with Bo in the shared memory. */
  let withAda = '';
  let shared = '';

  const readVisitor = (id: string) => account('GET', `/v1/visitors/${encodeURIComponent(id)}`);
  const factsOf = async (id: string) => ((await (await readVisitor(id)).json()) as VisitorBody).facts;

  /** A session with the visitor, ended, and the memory its job would report. */
  async function visit(call: TestAccount['call'], body: Record<string, unknown>, facts?: string[]): Promise<string> {
    const answer = await call('POST', '/v1/sessions/start', json(body));
    expect(answer.status).toBe(200);
    const room = ((await answer.json()) as { room_name: string }).room_name;
    const dispatch = (await service.services.livekit.dispatches.listDispatch(room)).find((d) => d.agentName)!;
    const { report_token: token } = JSON.parse(dispatch.metadata) as { report_token: string };
    expect((await call('POST', `/v1/sessions/${room}/end`)).status).toBe(200);
    if (facts) {
      const reported = await fetch(`${service.url}/internal/sessions/${room}/reports`, {
        method: 'POST',
        body: JSON.stringify({ type: 'memory', facts }),
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      });
      expect(reported.status).toBe(200);
    }
    return room;
  }

  beforeAll(async () => {
    service = await startTestService('pglite', { livekit: 'local', env: { CONSOLE_STARTER_CREDITS: '10000' } });
    browser = await launchBrowser();
    visitor = await browser.newPage({ viewport: { width: 390, height: 844 }, baseURL: service.url });
    const apiKey = await signUpInBrowser(visitor.page, 'vera@example.com');
    account = (method, path, init = {}) =>
      service.call(method, path, { ...init, headers: { authorization: `Bearer ${apiKey}`, ...init.headers } });
    const create = async (call: TestAccount['call'], name: string) => {
      const answer = await call('POST', '/v1/identities', { body: await identityForm({ name, language: 'en' }) });
      expect(answer.status).toBe(200);
      return (await answer.json()) as IdentityBody;
    };
    ada = await create(account, 'Ada');
    bo = await create(account, 'Bo');
    withAda = await visit(account, { identity_id: ada.identity_id, visitor_id: ZOFIA }, [
      'Her name is Zofia.',
      'She is allergic to peanuts.',
    ]);
    shared = await visit(account, { identity_id: bo.identity_id, visitor_id: ZOFIA, memory_scope: 'account' }, [
      'She prefers Tuesdays.',
    ]);
    await visit(account, { identity_id: ada.identity_id, visitor_id: TOM });
    // Tom's shared memory is full: one more is refused.
    const full = Array.from({ length: 20 }, (_, i) => ({ text: `Fact number ${i + 1}.` }));
    expect((await account('PATCH', `/v1/visitors/${encodeURIComponent(TOM)}`, json({ facts: full }))).status).toBe(200);
    await visit(account, { identity_id: ada.identity_id, visitor_id: CRM });
    // Another account's visitor, with the same id as one of ours and one of its own.
    stranger = await service.account({ credits: 10_000 });
    const theirs = await create(stranger.call, 'Stranger');
    await visit(stranger.call, { identity_id: theirs.identity_id, visitor_id: ZOFIA }, ['Her name is Zuzanna.']);
    await visit(stranger.call, { identity_id: theirs.identity_id, visitor_id: 'stranger-only' });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    removeScreenshots();
  });

  /** The editor's row whose text is `text`. */
  const rowWith = async (text: string) => {
    const { page } = visitor;
    const index = await page.$$eval(
      '[data-testid=fact-row] textarea',
      (areas, wanted) => areas.findIndex((area) => (area as HTMLTextAreaElement).value === wanted),
      text,
    );
    expect(index).toBeGreaterThanOrEqual(0);
    return page.locator('[data-testid=fact-row]').nth(index);
  };

  test("the list shows the account's visitors, not another account's; one shows its facts by scope with their sessions", async () => {
    const { page } = visitor;
    await page.goto('/console#/visitors');
    await page.waitForSelector('#visitors-table');
    const ids = await page.$$eval('#visitors-table tr[data-visitor-id]', (rows) =>
      rows.map((row) => (row as HTMLElement).dataset.visitorId!),
    );
    expect(ids.sort()).toEqual([CRM, TOM, ZOFIA].sort());
    expect(await page.textContent('#visitors-table')).not.toContain('stranger-only');
    const zofia = page.locator(`#visitors-table tr[data-visitor-id="${ZOFIA}"]`);
    expect(await zofia.locator('td[data-label=Facts]').textContent()).toBe('3');
    expect(await page.locator(`tr[data-visitor-id="${CRM}"] td[data-label="Last session"]`).textContent()).not.toBe(
      '—',
    );

    await zofia.locator('[data-testid=open-visitor]').click();
    await page.waitForSelector('#visitor-facts');
    expect(await zofia.getAttribute('aria-current')).toBe('true');
    const adaScope = page.locator(`#visitor-facts section[data-scope="${ada.identity_id}"]`);
    const sharedScope = page.locator('#visitor-facts section[data-scope=shared]');
    expect(await adaScope.locator('h3').textContent()).toBe('Ada');
    expect(await sharedScope.locator('h3').textContent()).toBe('Shared by every identity');
    expect(await adaScope.locator('[data-testid=fact-text]').allTextContents()).toEqual([
      'Her name is Zofia.',
      'She is allergic to peanuts.',
    ]);
    expect(await adaScope.locator('[data-testid=visitor-fact]').first().textContent()).toContain(withAda);
    expect(
      await sharedScope.locator(`[data-testid=visitor-fact][data-session-id="${shared}"]`).textContent(),
    ).toContain('She prefers Tuesdays.');
    // The other account's Zofia is theirs alone.
    expect(await page.textContent('#visitor-detail')).not.toContain('Zuzanna');

    // A visitor with nothing remembered says so.
    await page.click(`tr[data-visitor-id="${CRM}"] [data-testid=open-visitor]`);
    await page.waitForSelector('#visitor-facts:has-text("Nothing remembered yet")');
    expect(await usability(page)).toEqual({ unlabelled: [], overflow: 0 });
  }, 60_000);

  test('correcting the facts: edit one, remove one, add one in a scope; read back through the API', async () => {
    const { page } = visitor;
    await page.click(`tr[data-visitor-id="${ZOFIA}"] [data-testid=open-visitor]`);
    await page.click('#edit-visitor-facts');
    await page.waitForSelector('#visitor-facts-form');
    expect(await page.locator('[data-testid=fact-row]').count()).toBe(3);
    await (await rowWith('She prefers Tuesdays.')).locator('textarea').fill('She prefers Tuesday mornings.');
    await (await rowWith('She is allergic to peanuts.')).locator('[data-testid=remove-fact]').click();
    await page.click('#add-fact');
    const added = page.locator('[data-testid=fact-row]').last();
    // A new fact starts shared; it can be given to an identity.
    expect(await added.locator('select').inputValue()).toBe('');
    await added.locator('textarea').fill('She lives in Kraków.');
    await added.locator('select').selectOption(bo.identity_id);
    expect(await usability(page)).toEqual({ unlabelled: [], overflow: 0 });
    await page.click('#save-visitor-facts');
    await page.waitForSelector('#visitor-status');
    expect(await page.textContent(`#visitor-facts section[data-scope="${bo.identity_id}"]`)).toContain(
      'She lives in Kraków.',
    );
    expect(await page.textContent('#visitor-facts section[data-scope=shared]')).toContain('by a correction');
    expect(await page.locator(`tr[data-visitor-id="${ZOFIA}"] td[data-label=Facts]`).textContent()).toBe('3');

    const facts = await factsOf(ZOFIA);
    expect(facts.map((f) => [f.text, f.identity_id, f.session_id]).sort()).toEqual(
      [
        // Untouched: still learned in its session.
        ['Her name is Zofia.', ada.identity_id, withAda],
        ['She prefers Tuesday mornings.', null, null],
        ['She lives in Kraków.', bo.identity_id, null],
      ].sort(),
    );
    await screenshot(page, 'visitors');
  }, 60_000);

  test('a refused save says why at its row and changes nothing: an empty fact, 21 facts in one scope', async () => {
    const { page } = visitor;
    const logged = visitor.errors.length;
    const before = await factsOf(ZOFIA);
    await page.click('#edit-visitor-facts');
    await page.click('#add-fact');
    // Blank but not empty: the browser lets it through, the service refuses it.
    await page.locator('[data-testid=fact-row] textarea').last().fill('   ');
    await page.click('#save-visitor-facts');
    await page.waitForSelector('#visitor-facts-error:not([hidden])');
    expect(await page.textContent('#visitor-facts-error')).toBe('Fact 4: The fact is empty: write it, or remove it.');
    expect(await page.getAttribute('#fact-text-3', 'aria-invalid')).toBe('true');
    expect(await page.textContent('#fact-text-3-error')).toContain('The fact is empty');
    expect(await factsOf(ZOFIA)).toEqual(before);
    await page.click('#cancel-visitor-facts');
    await page.waitForSelector('#visitor-facts-form', { state: 'detached' });

    await page.click(`tr[data-visitor-id="${TOM}"] [data-testid=open-visitor]`);
    await page.click('#edit-visitor-facts');
    expect(await page.locator('[data-testid=fact-row]').count()).toBe(20);
    await page.click('#add-fact');
    await page.locator('[data-testid=fact-row] textarea').last().fill('One too many.');
    await page.click('#save-visitor-facts');
    await page.waitForSelector('#visitor-facts-error:not([hidden])');
    expect(await page.textContent('#visitor-facts-error')).toBe(
      'Fact 21: Shared by every identity has more than 20 facts: remove some or move them to another scope.',
    );
    expect(await page.textContent('#fact-text-20-error')).toContain('more than 20 facts');
    expect(await factsOf(TOM)).toHaveLength(20);
    // Given to an identity instead, it is accepted.
    await page.locator('[data-testid=fact-row] select').last().selectOption(ada.identity_id);
    await page.click('#save-visitor-facts');
    await page.waitForSelector('#visitor-status');
    expect((await factsOf(TOM)).filter((f) => f.identity_id === ada.identity_id).map((f) => f.text)).toEqual([
      'One too many.',
    ]);
    // Chromium logs each 422 it was answered with: the only console errors this page may have.
    expect(visitor.errors.slice(logged).every((line) => line.includes('422'))).toBe(true);
    expect(visitor.errors.slice(logged)).toHaveLength(2);
  }, 60_000);

  test('forgetting asks first; then the visitor is gone from the API and the list', async () => {
    const { page } = visitor;
    const row = page.locator(`#visitors-table tr[data-visitor-id="${TOM}"]`);
    await row.locator('[data-testid=open-visitor]').click();
    await page.click('#forget-visitor');
    expect(await page.textContent('#confirm-message')).toContain(TOM);
    await page.click('#confirm-cancel');
    expect(await row.count()).toBe(1);
    expect((await readVisitor(TOM)).status).toBe(200);

    await page.click('#forget-visitor');
    await page.click('#confirm-accept');
    await row.waitFor({ state: 'detached' });
    expect(await page.isHidden('#visitor-detail')).toBe(true);
    expect((await readVisitor(TOM)).status).toBe(404);
    expect(await page.locator('#visitors-table tr[data-visitor-id]').count()).toBe(2);
    expect((await readVisitor(ZOFIA)).status).toBe(200);
    // The other account's visitor of the same name is untouched.
    expect((await stranger.call('GET', `/v1/visitors/${encodeURIComponent(ZOFIA)}`)).status).toBe(200);
    expect(visitor.errors.filter((e) => !/status of (401|422)/.test(e))).toEqual([]);
  }, 60_000);

  test('a new account sees why the list is empty', async () => {
    const other = await browser.newPage({ viewport: { width: 390, height: 844 }, baseURL: service.url });
    await signUpInBrowser(other.page, 'walt@example.com');
    await other.page.goto('/console#/visitors');
    await other.page.waitForSelector('#visitors-empty');
    expect(await other.page.textContent('#visitors-empty')).toContain('visitor_id');
    expect(await other.page.getAttribute('#visitors-empty a', 'href')).toBe('/docs');
    expect(await other.page.$('#visitors-table')).toBeNull();
    expect(other.errors.filter((e) => !/status of 401/.test(e))).toEqual([]);
  }, 60_000);
});
