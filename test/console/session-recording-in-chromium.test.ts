// A recorded session on the console's Sessions page in real headless Chromium (issue 43, point
// 9): its Recording block follows the status while the session is recorded, then plays the MP4
// (readyState, duration, time advancing) with the conversation's captions loaded in its <track>
// (a turn the job reported is a cue), offers the file for download, and deletes it after the
// confirm dialog, after which the link answers 404. A file in the account's own bucket shows its
// key, a failed one its reason. No agent: the test acts as the job (test/recordings/support.ts),
// sending real fragmented MP4 (ffmpeg) with the session's report token. On PGlite and the local
// store (docs/testing.md#engines: the database is not the point). Beside it, a session's outcome
// (issue 44) on the same page. Sweeps every second, a 2 s
// wait after the end (the service defaults to 10 s and 30 s).
import { beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { recordings } from '../../src/recordings/schema.ts';
import { sessions } from '../../src/sessions/schema.ts';
import { cut, fragmentedMp4, recordedSession, sendPart } from '../recordings/support.ts';
import { oneEngine } from '../support/service.ts';
import { consoleInChromium, screenshot, usability } from './support.ts';

const SPOKEN = 'Could you show me the river walk on a map?';

describe.each(oneEngine('pglite'))('a session recording on the Sessions page, on %s, in Chromium', (engine) => {
  const suite = consoleInChromium({
    email: 'ada-recording@example.com',
    engine,
    service: { env: { RECORDING_SWEEP_INTERVAL_SECONDS: '1', RECORDING_FINISH_WAIT_SECONDS: '2' } },
    viewport: { width: 1280, height: 900 },
  });
  let accountId: string;

  beforeAll(async () => {
    const me = (await suite.visitor.page.evaluate(async () => (await fetch('/console/api/me')).json())) as {
      account: { account_id: string };
    };
    accountId = me.account.account_id;
  });

  /** A running session recorded as the start's `record: true` makes it. */
  const recorded = async () => {
    const session = await recordedSession(suite.service, accountId);
    await suite.service.services.database.db.update(sessions).set({ record: true }).where(eq(sessions.id, session.id));
    return session;
  };
  const report = (id: string, token: string, body: unknown) =>
    fetch(`${suite.service.url}/internal/sessions/${id}/reports`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const openSession = async (id: string) => {
    const { page } = suite.visitor;
    // The same URL again would change no hash and reload nothing: the list would be the old one.
    if (page.url().endsWith('#/sessions')) await page.reload();
    else await page.goto('/console#/sessions');
    await page.click(`#sessions-table tr[data-session-id="${id}"] [data-testid=view-transcript]`);
    await page.waitForSelector('#session-recording #recording-status');
  };

  test('the recording plays with its captions, downloads, and is deleted after a confirm', async () => {
    const { page } = suite.visitor;
    const mp4 = await fragmentedMp4(3);
    const session = await recorded();
    // The job's reports: the picture starts (the captions' zero), then a turn 0.5–2.5 s into it.
    const streaming = Date.now();
    const at = (ms: number) => new Date(streaming + ms).toISOString();
    expect((await report(session.id, session.token, { type: 'avatar_streaming', at: at(0) })).status).toBe(200);
    const turn = {
      type: 'transcript',
      turn_id: 'item_1',
      role: 'user',
      text: SPOKEN,
      language: 'en',
      interrupted: false,
      started_at: at(500),
      ended_at: at(2500),
    };
    expect((await report(session.id, session.token, turn)).status).toBe(200);
    // The job began recording as the picture started, and says so with its chunks.
    session.startPart('AJ_console', streaming);
    await sendPart(session, 'AJ_console', cut(mp4, 3));
    expect((await session.done('AJ_console', 3, 3000)).status).toBe(200);

    // While the session runs, the block says it is recording; it reads again until ready.
    await openSession(session.id);
    expect(await page.getAttribute('#recording-status', 'data-status')).toBe('recording');
    expect(await page.locator('#recording-video').count()).toBe(0);
    await session.end();
    await page.waitForSelector('#recording-video', { timeout: 20_000 });
    expect(await page.getAttribute('#recording-status', 'data-status')).toBe('ready');

    const api = (await page.evaluate(
      async (id) => (await fetch(`/console/api/sessions/${id}/recording`)).json(),
      session.id,
    )) as { download_url: string; duration_seconds: number; size_bytes: number };
    // The store's link (ASSETS_URL), not the console's origin: the player must not depend on that.
    expect(api.download_url).toContain(`/recordings/${session.id}/recording.mp4?`);

    // The player: metadata, then playing muted with time moving, and the captions' cue loaded.
    const played = await page.evaluate(async () => {
      const video = document.querySelector<HTMLVideoElement>('#recording-video')!;
      video.muted = true;
      if (video.readyState < 1) await new Promise((resolve) => video.addEventListener('loadedmetadata', resolve));
      const readyState = video.readyState;
      const duration = video.duration;
      await video.play();
      const start = video.currentTime;
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const track = document.querySelector<HTMLTrackElement>('#recording-video track')!;
      if (track.readyState !== HTMLTrackElement.LOADED)
        await new Promise((resolve, reject) => {
          track.addEventListener('load', resolve);
          track.addEventListener('error', () => reject(new Error('the captions did not load')));
        });
      const cues = Array.from(track.track.cues ?? [], (cue) => {
        const { startTime, endTime, text } = cue as VTTCue;
        return { startTime, endTime, text };
      });
      return {
        readyState,
        duration,
        advanced: video.currentTime - start,
        paused: video.paused,
        source: video.currentSrc,
        trackKind: track.kind,
        trackDefault: track.default,
        trackMode: track.track.mode,
        cues,
      };
    });
    expect(played.readyState).toBeGreaterThanOrEqual(1);
    expect(played.duration).toBeCloseTo(api.duration_seconds, 0);
    expect(played.duration).toBeCloseTo(3, 0);
    expect(played.advanced).toBeGreaterThan(0.5);
    expect(played.paused).toBe(false);
    expect(played.source).toBe(api.download_url);
    expect({ kind: played.trackKind, default: played.trackDefault, mode: played.trackMode }).toEqual({
      kind: 'captions',
      default: true,
      mode: 'showing',
    });
    expect(played.cues).toHaveLength(1);
    expect(played.cues[0]!.text).toContain(`Visitor: ${SPOKEN}`);
    expect(played.cues[0]!.startTime).toBeCloseTo(0.5, 1);
    expect(played.cues[0]!.endTime).toBeCloseTo(2.5, 1);

    // Download: the file itself, named after the session.
    const download = page.locator('#download-recording');
    expect(await download.getAttribute('href')).toBe(api.download_url);
    expect(await download.getAttribute('download')).toBe(`${session.id}.mp4`);
    const file = await fetch(api.download_url);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('video/mp4');
    expect((await file.arrayBuffer()).byteLength).toBe(api.size_bytes);
    expect(await usability(page)).toEqual({ unlabelled: [], overflow: 0 });
    await screenshot(page, 'session-recording');

    // Delete: Cancel keeps it; Delete recording removes the file and says so.
    await page.click('#delete-recording');
    await page.click('#confirm-cancel');
    expect(await page.getAttribute('#recording-status', 'data-status')).toBe('ready');
    await page.click('#delete-recording');
    await page.click('#confirm-accept');
    await page.waitForSelector('#recording-status[data-status=deleted]');
    expect(await page.locator('#recording-video').count()).toBe(0);
    expect(await page.locator('#download-recording').count()).toBe(0);
    expect((await fetch(api.download_url)).status).toBe(404);
    // It stays deleted when read afresh.
    await openSession(session.id);
    expect(await page.getAttribute('#recording-status', 'data-status')).toBe('deleted');
    expect(suite.visitor.errors).toEqual([]);
  }, 60_000);

  test("a file in the account's bucket shows its key; a failed one its reason; an unrecorded session no block", async () => {
    const { page } = suite.visitor;
    const db = suite.service.services.database.db;
    const inBucket = await recorded();
    await inBucket.end();
    const key = `exports/likeness/${inBucket.id}/recording.mp4`;
    await db
      .update(recordings)
      .set({
        status: 'ready',
        store: 'customer',
        objectKey: key,
        durationMs: 3000,
        sizeBytes: 1234,
        readyAt: new Date(),
      })
      .where(eq(recordings.sessionId, inBucket.id));
    await openSession(inBucket.id);
    expect(await page.getAttribute('#recording-status', 'data-status')).toBe('ready');
    expect(await page.textContent('#recording-object-key')).toBe(key);
    expect(await page.locator('#recording-video').count()).toBe(0);

    const failed = await recorded();
    await failed.end();
    await openSession(failed.id);
    await page.waitForSelector('#recording-status[data-status=failed]', { timeout: 20_000 });
    expect(await page.textContent('#session-recording .recording-status')).toContain('no media was received');

    const plain = await recordedSession(suite.service, accountId, { recorded: false });
    await page.reload();
    await page.click(`#sessions-table tr[data-session-id="${plain.id}"] [data-testid=view-transcript]`);
    await page.waitForSelector('#session-transcript-turns, #session-transcript p.muted:has-text("Nothing was said")');
    expect(await page.locator('#session-recording').count()).toBe(0);
    expect(suite.visitor.errors).toEqual([]);
  }, 60_000);

  test('a session’s outcome shows field by field in its schema’s order; one being written or failed says so', async () => {
    const { page } = suite.visitor;
    const schema = {
      type: 'object',
      properties: {
        name: { type: 'string', description: "The visitor's name" },
        wants_demo: { type: 'boolean', description: 'Whether they asked for a demo' },
        email: { type: 'string', description: 'Their email' },
      },
    };
    const { db } = suite.service.services.database;
    const set = async (values: Partial<typeof sessions.$inferInsert>) => {
      const session = await recordedSession(suite.service, accountId, { recorded: false });
      await db
        .update(sessions)
        .set({ outcomeSchema: schema, ...values })
        .where(eq(sessions.id, session.id));
      await page.reload();
      await page.click(`#sessions-table tr[data-session-id="${session.id}"] [data-testid=view-transcript]`);
      await page.waitForSelector('#session-outcome');
    };
    await set({ outcomeStatus: 'ready', outcome: { name: 'Zofia Nowak', wants_demo: true, email: null } });
    expect(await page.locator('#session-outcome dt').allTextContents()).toEqual(['name', 'wants_demo', 'email']);
    expect(await page.locator('#session-outcome dd').allTextContents()).toEqual(['Zofia Nowak', 'true', '—']);
    await set({ outcomeStatus: 'pending' });
    expect(await page.textContent('#session-outcome')).toContain('Being written');
    await set({ outcomeStatus: 'failed', outcomeDetail: 'the language model did not answer within 30 s' });
    expect(await page.textContent('#session-outcome')).toContain('None: the language model did not answer within 30 s');
    expect(suite.visitor.errors).toEqual([]);
  }, 60_000);
});
