// The console's Tools and Knowledge pages in real headless Chromium (issue 33): add a webhook
// tool (its signing secret shown once) and a client tool, see a refused schema's reason at its
// field, upload a text document and watch it become ready, give an identity both (in its create
// form and its editor) and read them back through the API; a deleted tool or document drops out
// of the identity. `UPDATE_SCREENSHOTS=1` writes docs/console/tools.png and knowledge.png.
import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { consoleInChromium, screenshot, secretShownOnce, usability } from './support.ts';

const ASTRONAUT = join(import.meta.dir, '../fixtures/astronaut.png');
const OPENING_HOURS = [
  '# Opening hours',
  '',
  'The museum opens at nine in the morning and closes at six in the evening, every day but Monday.',
  '',
  'Guided tours leave from the main hall at ten, noon and three. Tickets for a tour cost twelve euros.',
].join('\n');

interface ToolBody {
  tool_id: string;
  name: string;
  type: string;
  url: string | null;
  timeout_ms: number;
  parameters: { required?: string[] };
  secret?: string;
}
interface DocumentBody {
  document_id: string;
  name: string;
  status: string;
  chunks: number;
}
interface IdentityBody {
  identity_id: string;
  tool_ids: string[];
  document_ids: string[];
}

describe('the Tools and Knowledge pages in Chromium', () => {
  // The webhook tool's receiver is on loopback; an identity costs credits.
  const suite = consoleInChromium({
    email: 'tess@example.com',
    service: { env: { WEBHOOKS_ALLOW_PRIVATE: 'true', CONSOLE_STARTER_CREDITS: '1000' } },
  });
  /** Filled in by the tests as they go: each builds on the one before. */
  let webhookTool: ToolBody;
  let clientTool: ToolBody;
  let uploaded: DocumentBody;
  let identityId = '';

  test('tools: a webhook tool (its secret shown once), a client tool, and a refused schema shown at its field', async () => {
    const { page } = suite.visitor;
    await page.goto('/console#/tools');
    await page.waitForSelector('#tool-form');
    // The list says "Loading…" until the account's tools come back.
    await page.waitForSelector('#tools-list :text("No tools yet.")');
    // A webhook tool starts from an example schema worth editing.
    expect(JSON.parse(await page.inputValue('#tool-parameters'))).toMatchObject({ type: 'object', required: ['date'] });
    await page.fill('#tool-name', 'check_availability');
    await page.fill('#tool-description', 'Checks which tables are free on a date.');
    await page.fill('#tool-url', 'http://127.0.0.1:9/tools/availability');
    await page.fill('#tool-timeout', '3000');
    await page.click('#add-tool');
    await secretShownOnce(page, 'tool');
    await page.waitForSelector('#tools-table tr[data-type=webhook]');

    // A client tool: no URL to fill, and its own example schema.
    await page.selectOption('#tool-type', 'client');
    expect(await page.isHidden('#tool-url')).toBe(true);
    expect(JSON.parse(await page.inputValue('#tool-parameters'))).toMatchObject({ required: ['url'] });
    await page.fill('#tool-name', 'show_page');
    await page.fill('#tool-description', 'Shows the visitor a page of the museum’s site.');
    await page.click('#add-tool');
    await page.waitForSelector('#tools-table tr[data-type=client]');
    expect(await page.$('#tool-secret-once')).toBeNull(); // only webhook tools have a secret
    expect(await page.locator('#tools-table tr[data-tool-id]').count()).toBe(2);

    const tools = await suite.read<ToolBody[]>('/v1/tools');
    webhookTool = tools.find((t) => t.type === 'webhook')!;
    clientTool = tools.find((t) => t.type === 'client')!;
    expect(webhookTool).toMatchObject({
      name: 'check_availability',
      url: 'http://127.0.0.1:9/tools/availability',
      timeout_ms: 3000,
      parameters: { required: ['date'] },
    });
    expect(webhookTool.secret).toBeUndefined();
    expect(clientTool).toMatchObject({ name: 'show_page', url: null, parameters: { required: ['url'] } });
    expect(await usability(page)).toEqual({ unlabelled: [], overflow: 0 });
    await screenshot(page, 'tools');

    // Not JSON: said at the field before anything is sent.
    const posts: string[] = [];
    page.on('request', (r) => void (r.method() === 'POST' && posts.push(new URL(r.url()).pathname)));
    await page.fill('#tool-name', 'opening_hours');
    await page.fill('#tool-description', 'Tells the opening hours of a day.');
    await page.fill('#tool-parameters', '{"type": "object", "properties": ');
    await page.click('#add-tool');
    await page.waitForSelector('#tool-parameters-error');
    expect(await page.textContent('#tool-parameters-error')).toContain('not valid JSON');
    expect(posts).toEqual([]);
    // A schema the service refuses (a type JSON Schema has not): its 422 is shown at the field,
    // saying where in the schema (Chromium logs the 422: the one console error this page may have).
    const logged = suite.visitor.errors.length;
    await page.fill('#tool-parameters', '{"type": "object", "properties": {"day": {"type": "date"}}}');
    await page.click('#add-tool');
    await page.waitForFunction(() =>
      document.querySelector('#tool-parameters-error')?.textContent?.includes('properties.day.type'),
    );
    expect(await page.getAttribute('#tool-parameters', 'aria-invalid')).toBe('true');
    expect(await page.isVisible('#tool-form-error')).toBe(true);
    expect(posts).toEqual(['/console/api/tools']);
    expect(await page.locator('#tools-table tr[data-tool-id]').count()).toBe(2);
    expect(suite.visitor.errors.slice(0, logged).filter((e) => !/status of 401 \(Unauthorized\)/.test(e))).toEqual([]);
    expect(suite.visitor.errors.slice(logged).every((line) => line.includes('422'))).toBe(true);
  }, 60_000);

  test('knowledge: upload a text document and see it become ready, with its passages counted', async () => {
    const { page } = suite.visitor;
    await page.goto('/console#/knowledge');
    await page.waitForSelector('#document-form');
    await page.setInputFiles('#document-file', {
      name: 'opening-hours.md',
      mimeType: 'text/markdown',
      buffer: Buffer.from(OPENING_HOURS),
    });
    await page.fill('#document-name', 'Opening hours');
    await page.click('#upload-document');
    // The page follows it by itself while it is processing.
    const row = await page.waitForSelector('#documents-table tr[data-document-id][data-status=ready]', {
      timeout: 90_000,
    });
    expect(await row.textContent()).toContain('Opening hours');
    const documents = await suite.read<DocumentBody[]>('/v1/documents');
    expect(documents).toHaveLength(1);
    uploaded = documents[0]!;
    expect(uploaded).toMatchObject({ name: 'Opening hours', status: 'ready' });
    expect(uploaded.chunks).toBeGreaterThan(0);
    expect(await row.$eval('td[data-label=Passages]', (cell) => cell.textContent)).toBe(String(uploaded.chunks));

    // One with nothing to read fails, and its row says why.
    await page.setInputFiles('#document-file', {
      name: 'blank.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from(' \n\n '),
    });
    await page.click('#upload-document');
    const failed = await page.waitForSelector('#documents-table tr[data-status=failed]', { timeout: 30_000 });
    expect(await failed.$eval('[data-testid=document-detail]', (p) => p.textContent)).toContain('no text');
    expect(await usability(page)).toEqual({ unlabelled: [], overflow: 0 });
    await screenshot(page, 'knowledge');
  }, 120_000);

  test('an identity gets tools and documents in its create form and its editor; a deleted tool or document drops out of it', async () => {
    const { page } = suite.visitor;
    await page.goto('/console#/identities');
    await page.waitForSelector('#identity-form');
    // A failed document answers nothing: it is not offered.
    expect(await page.locator('#identity-documents input[type=checkbox]').count()).toBe(1);
    await page.fill('#identity-name', 'Ada');
    await page.fill('#identity-prompt', 'You are Ada, a friendly guide to our museum.');
    await page.setInputFiles('#identity-image', ASTRONAUT);
    await page.check(`#identity-tool-${webhookTool.tool_id}`);
    await page.check(`#identity-document-${uploaded.document_id}`);
    expect(await usability(page)).toEqual({ unlabelled: [], overflow: 0 });
    await page.click('#create-identity');
    const card = await page.waitForSelector('li[data-testid=identity-card][data-status=ready]', { timeout: 30_000 });
    identityId = (await card.getAttribute('data-identity-id'))!;
    expect(await suite.read<IdentityBody>(`/v1/identities/${identityId}`)).toMatchObject({
      tool_ids: [webhookTool.tool_id],
      document_ids: [uploaded.document_id],
    });

    // The editor shows what the identity has; the client tool is added.
    await page.click(`li[data-identity-id="${identityId}"] [data-testid=edit-identity]`);
    await page.waitForSelector('#edit-identity-form');
    expect(await page.isChecked(`#edit-identity-tool-${webhookTool.tool_id}`)).toBe(true);
    expect(await page.isChecked(`#edit-identity-tool-${clientTool.tool_id}`)).toBe(false);
    expect(await page.isChecked(`#edit-identity-document-${uploaded.document_id}`)).toBe(true);
    await page.check(`#edit-identity-tool-${clientTool.tool_id}`);
    await page.click('#save-identity');
    await page.waitForSelector('#edit-identity-form', { state: 'detached' });
    expect(await page.textContent(`li[data-identity-id="${identityId}"] [data-testid=identity-attachments]`)).toBe(
      '2 tools · 1 document',
    );
    expect((await suite.read<IdentityBody>(`/v1/identities/${identityId}`)).tool_ids.sort()).toEqual(
      [webhookTool.tool_id, clientTool.tool_id].sort(),
    );

    // Deleting the webhook tool (after a confirmation) takes it off the identity.
    await page.goto('/console#/tools');
    const row = page.locator(`#tools-table tr[data-tool-id="${webhookTool.tool_id}"]`);
    await row.locator('[data-testid=delete-tool]').click();
    await page.click('#confirm-accept');
    await row.waitFor({ state: 'detached' });
    expect(await page.locator('#tools-table tr[data-tool-id]').count()).toBe(1);
    expect((await suite.read<IdentityBody>(`/v1/identities/${identityId}`)).tool_ids).toEqual([clientTool.tool_id]);

    // So does deleting the document; Cancel in the confirmation keeps it.
    await page.goto('/console#/knowledge');
    const documentRow = page.locator(`#documents-table tr[data-document-id="${uploaded.document_id}"]`);
    await documentRow.locator('[data-testid=delete-document]').click();
    await page.click('#confirm-cancel');
    expect(await documentRow.count()).toBe(1);
    await documentRow.locator('[data-testid=delete-document]').click();
    await page.click('#confirm-accept');
    await documentRow.waitFor({ state: 'detached' });
    expect(await page.locator('#documents-table tr[data-document-id]').count()).toBe(1);
    expect((await suite.read<IdentityBody>(`/v1/identities/${identityId}`)).document_ids).toEqual([]);

    // The editor now offers what is left.
    await page.goto('/console#/identities');
    await page.click(`li[data-identity-id="${identityId}"] [data-testid=edit-identity]`);
    await page.waitForSelector('#edit-identity-form');
    expect(await page.$(`#edit-identity-tool-${webhookTool.tool_id}`)).toBeNull();
    expect(await page.isChecked(`#edit-identity-tool-${clientTool.tool_id}`)).toBe(true);
    expect(await page.textContent('#edit-identity-documents')).toContain('No documents ready yet');
    expect(suite.visitor.errors.filter((e) => !/status of (401|422)/.test(e))).toEqual([]);
  }, 90_000);
});
