// The account page's "Recording storage" in real headless Chromium (issue 43 point 9): a bucket
// that fails its check shows the bucket server's error at the form and is not saved; the right
// secret saves it, the page shows the settings and never the secret; "Use the service's storage"
// forgets them. The bucket is a second S3 server standing for the customer's (customer-s3.ts).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { randomBytes } from 'node:crypto';
import { signUpInBrowser, usability } from '../console/support.ts';
import { launchBrowser, type TestBrowser, type TestPage } from '../support/browser.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { type CustomerS3, startCustomerS3 } from './customer-s3.ts';

describe('Recording storage on the account page in Chromium', () => {
  let service: TestService;
  let customer: CustomerS3;
  let browser: TestBrowser;
  let visitor: TestPage;

  beforeAll(async () => {
    customer = await startCustomerS3();
    service = await startTestService('pglite', {
      env: { RECORDING_STORAGE_KEY: randomBytes(32).toString('hex'), WEBHOOKS_ALLOW_PRIVATE: 'true' },
    });
    browser = await launchBrowser();
    visitor = await browser.newPage({ viewport: { width: 390, height: 844 }, baseURL: service.url });
    await signUpInBrowser(visitor.page, 'ada@example.com');
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await customer?.stop();
  });

  test('a refused bucket shows why; a good one is saved and shown without its secret; the service store again', async () => {
    const { page } = visitor;
    await page.goto('/console#/account');
    await page.waitForSelector('#storage-saved:has-text("the service\'s storage")');
    await page.fill('#storage-endpoint', customer.endpoint);
    await page.fill('#storage-bucket', customer.bucket);
    await page.fill('#storage-prefix', 'calls/');
    await page.fill('#storage-access-key-id', customer.accessKeyId);
    await page.fill('#storage-secret-access-key', 'not-the-secret');
    await page.fill('#storage-retention-days', '7');
    const logged = visitor.errors.length;
    await page.click('#save-storage');
    await page.waitForSelector('#storage-form-error:not([hidden])', { timeout: 20_000 });
    expect(await page.textContent('#storage-form-error')).toContain('SignatureDoesNotMatch');
    expect(visitor.errors.slice(logged).every((line) => line.includes('422'))).toBe(true);

    await page.fill('#storage-secret-access-key', customer.secretAccessKey);
    await page.click('#save-storage');
    await page.waitForSelector('#storage-status:has-text("the bucket passed its check")', { timeout: 20_000 });
    const summary = (await page.textContent('#storage-saved'))!;
    expect(summary).toContain(customer.bucket);
    expect(summary).toContain('7 days');
    expect(await page.inputValue('#storage-secret-access-key')).toBe('');
    expect(await page.content()).not.toContain(customer.secretAccessKey);
    expect(await usability(page)).toEqual({ unlabelled: [], overflow: 0 });

    // Shown again after a reload, from the service.
    await page.reload();
    await page.waitForSelector(`#storage-saved:has-text("${customer.bucket}")`);
    expect(await page.inputValue('#storage-bucket')).toBe(customer.bucket);

    await page.click('#use-service-storage');
    await page.waitForSelector('#storage-status:has-text("service\'s storage")');
    expect(await page.textContent('#storage-saved')).toContain("the service's storage");
    expect(await page.evaluate(async () => (await fetch('/console/api/recording-storage')).status)).toBe(404);
  }, 60_000);
});
