// The console's Webhooks page in real headless Chromium (issue 17): add an endpoint (its signing
// secret shown once), send a test event to a receiver on loopback that verifies it with the
// secret the page showed, see the delivery, set the low-balance threshold; a refused URL shows
// its reason. `UPDATE_SCREENSHOTS=1` writes docs/console/webhooks.png.
import { describe, expect, test } from 'bun:test';
import { WebhookReceiver } from '../support/webhooks.ts';
import { consoleInChromium, screenshot, secretShownOnce, usability } from './support.ts';

describe('the Webhooks page in Chromium', () => {
  // The receiver is on loopback.
  const suite = consoleInChromium({
    email: 'grace@example.com',
    service: { env: { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_POLL_MS: '200' } },
  });

  test('webhooks: add an endpoint (its secret shown once), send a test event and see it delivered; set the low-balance threshold', async () => {
    const receiver = new WebhookReceiver();
    try {
      const { page } = suite.visitor;
      await page.goto('/console#/webhooks');
      await page.waitForSelector('#webhook-form');
      await page.fill('#webhook-url', receiver.url('/console-hook'));
      await page.check('#webhook-event-credits-low');
      await page.fill('#webhook-description', 'CRM');
      await page.click('#add-webhook');
      const secret = await secretShownOnce(page, 'webhook');
      const row = page.locator('#webhooks-table tr[data-webhook-id]');
      expect(await row.count()).toBe(1);
      expect(await row.textContent()).toContain('session.ended, credits.low');
      await page.click('[data-testid=test-webhook]');
      await page.waitForSelector('#deliveries-table tr[data-status=delivered]', { timeout: 15_000 });
      expect(await page.textContent('#deliveries-table')).toContain('webhook.test');
      // What the page showed as delivered reached the receiver, signed with the secret it showed once.
      expect(receiver.verified('/console-hook', secret).map((e) => e.type)).toEqual(['webhook.test']);
      await page.fill('#low-balance-threshold', '250');
      await page.click('#save-threshold');
      await page.waitForSelector('#threshold-status:has-text("Saved.")');
      expect(
        (
          (await page.evaluate(async () => (await fetch('/console/api/credits?limit=1')).json())) as {
            low_balance_threshold: number;
          }
        ).low_balance_threshold,
      ).toBe(250);
      expect(await usability(page)).toEqual({ unlabelled: [], overflow: 0 });
      await screenshot(page, 'webhooks');
      // A URL the service refuses shows its reason at the form (Chromium logs the 422 it was
      // answered with: the one console error this page may have).
      const logged = suite.visitor.errors.length;
      await page.fill('#webhook-url', 'ftp://example.com/hook');
      await page.click('#add-webhook');
      await page.waitForSelector('#webhook-form-error:not([hidden])');
      expect(await page.textContent('#webhook-form-error')).toContain('http');
      expect(suite.visitor.errors.slice(0, logged).filter((e) => !/status of 401 \(Unauthorized\)/.test(e))).toEqual(
        [],
      );
      expect(suite.visitor.errors.slice(logged).every((line) => line.includes('422'))).toBe(true);
    } finally {
      receiver.stop();
    }
  }, 60_000);
});
