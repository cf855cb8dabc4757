// What the console's Chromium suites measure on a page: the avatar video playing, the audio
// elements, where the parts of a conversation are, column names split inside a word, and the
// usage chart's last bar.
import { expect } from 'bun:test';
import type { Page } from 'playwright-core';

/** The avatar video plays: a size, time moving on, and pictures that change. */
export async function videoPlays(page: Page): Promise<{ width: number; height: number }> {
  await page.waitForFunction(
    () => {
      const video = document.querySelector<HTMLVideoElement>('#avatar-video');
      return !!video && video.videoWidth > 0 && video.currentTime > 0.5;
    },
    undefined,
    { timeout: 30_000 },
  );
  const sample = () =>
    page.evaluate(() => {
      const video = document.querySelector<HTMLVideoElement>('#avatar-video');
      // Between two sessions, or while the track's resolution changes, the element may have no picture for a moment.
      if (!video || video.videoWidth === 0) return null;
      const canvas = document.createElement('canvas');
      canvas.width = video.videoWidth;
      canvas.height = video.videoHeight;
      const context = canvas.getContext('2d')!;
      context.drawImage(video, 0, 0);
      const pixels = context.getImageData(0, 0, canvas.width, canvas.height).data;
      let sum = 0;
      for (let i = 0; i < pixels.length; i += 4) sum += pixels[i]! * ((i % 997) + 1);
      return { time: video.currentTime, sum, width: video.videoWidth, height: video.videoHeight, paused: video.paused };
    });
  const pictured = async () => {
    for (let i = 0; i < 40; i++) {
      const picture = await sample();
      if (picture) return picture;
      await Bun.sleep(125);
    }
    throw new Error('the avatar video had no picture for 5 s');
  };
  const first = await pictured();
  let later = first;
  // The avatar breathes and blinks: within a few seconds the picture differs.
  for (let i = 0; i < 20 && later.sum === first.sum; i++) {
    await Bun.sleep(250);
    later = await pictured();
  }
  expect(first.paused).toBe(false);
  expect(later.time).toBeGreaterThan(first.time);
  expect(later.sum).not.toBe(first.sum);
  return { width: first.width, height: first.height };
}

/** Every <audio> element on the page, with what it plays. */
export function audioElements(page: Page) {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll('audio')).map((audio) => {
      const stream = audio.srcObject as MediaStream | null;
      return {
        id: audio.id,
        paused: audio.paused,
        tracks: stream ? stream.getAudioTracks().map((t) => t.readyState) : [],
      };
    }),
  );
}

export type Box = { top: number; bottom: number; left: number; right: number };

/** Whether `inner` lies within `outer` (a pixel of rounding allowed). */
export const inside = (inner: Box | null, outer: Box | null) =>
  !!inner &&
  !!outer &&
  inner.top >= outer.top - 1 &&
  inner.bottom <= outer.bottom + 1 &&
  inner.left >= outer.left - 1 &&
  inner.right <= outer.right + 1;

/** Where the conversation's parts are: the video, Mute, End, the transcript and its last row. */
export function conversationLayout(page: Page) {
  return page.evaluate(() => {
    const box = (element: Element | null | undefined) => {
      if (!element) return null;
      const { top, bottom, left, right } = element.getBoundingClientRect();
      return { top, bottom, left, right };
    };
    const rows = document.querySelectorAll('#transcript li');
    return {
      screen: { top: 0, left: 0, bottom: innerHeight, right: innerWidth },
      video: box(document.querySelector('.video-frame')),
      mute: box(document.querySelector('#mic-toggle')),
      end: box(document.querySelector('#end-session')),
      transcript: box(document.querySelector('#transcript')),
      lastRow: box(rows[rows.length - 1]),
      rows: rows.length,
    };
  });
}

/** The words of `table`'s column names that the browser split across two lines. */
export function headerWordsSplit(page: Page, table: string): Promise<string[]> {
  return page.evaluate((selector) => {
    const split: string[] = [];
    for (const cell of Array.from(document.querySelectorAll(`${selector} th`))) {
      const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (const word of (node.textContent ?? '').matchAll(/\S+/g)) {
          const range = document.createRange();
          range.setStart(node, word.index);
          range.setEnd(node, word.index + word[0].length);
          const lines = new Set(Array.from(range.getClientRects(), (rect) => Math.round(rect.top)));
          if (lines.size > 1) split.push(word[0]);
        }
      }
    }
    return split;
  }, table);
}

/**
 * The usage chart's last bar and the plotting area, in page pixels, read from the canvas along
 * a row just above the x axis (every bar with a value crosses it; bars are blue, the line orange).
 */
export function usageChartLastBar(page: Page) {
  return page.evaluate(() => {
    const canvas = document.querySelector<HTMLCanvasElement>('#usage-chart canvas')!;
    const plot = document.querySelector('#usage-chart .u-over')!.getBoundingClientRect();
    const frame = canvas.getBoundingClientRect();
    const scale = canvas.width / frame.width;
    const y = Math.round((plot.bottom - frame.top - 2) * scale);
    const row = canvas.getContext('2d')!.getImageData(0, y, canvas.width, 1).data;
    const blue = (x: number) => row[x * 4 + 3]! > 0 && row[x * 4 + 2]! > row[x * 4]! + 40;
    let right = canvas.width - 1;
    while (right >= 0 && !blue(right)) right--;
    let left = right;
    while (left > 0 && blue(left - 1)) left--;
    return {
      barLeft: frame.left + left / scale,
      barRight: frame.left + (right + 1) / scale,
      plotLeft: plot.left,
      plotRight: plot.right,
      found: right >= 0,
    };
  });
}
