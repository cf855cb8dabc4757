// The "Recording" mark (issue 43 point 7) as the console's test call and the embed both show it:
// visible, announced, and inside the video's box in its top-right corner (the face is in the middle).
import { expect } from 'bun:test';
import type { Page } from 'playwright-core';

/** The mark at `markSelector` shows "Recording" as a status over the top-right corner of the video at `videoSelector`. */
export async function expectMarkOnVideo(page: Page, markSelector: string, videoSelector: string): Promise<void> {
  const mark = page.locator(markSelector);
  await mark.waitFor({ state: 'visible', timeout: 5000 });
  expect((await mark.textContent())?.trim()).toBe('Recording');
  expect(await mark.getAttribute('role')).toBe('status');
  const [markBox, videoBox] = [await mark.boundingBox(), await page.locator(videoSelector).boundingBox()];
  expect(markBox!.x + markBox!.width).toBeLessThanOrEqual(videoBox!.x + videoBox!.width);
  expect(markBox!.x).toBeGreaterThan(videoBox!.x + videoBox!.width / 2);
  expect(markBox!.y - videoBox!.y).toBeLessThan(videoBox!.height * 0.1);
}
