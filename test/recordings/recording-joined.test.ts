// Recordings (issue 43), on Postgres and the S3 store (docs/testing.md#engines: the join is
// ffmpeg's and the store's, the database only keeps its state): a job's chunks of fragmented
// MP4 (real ffmpeg) become one MP4 once the session ended and every part said done; two parts
// (a failover) join in order; the file is served with byte ranges; `recording.ready` and
// `recording.failed` arrive; a part that never says done is joined after
// RECORDING_FINISH_WAIT_SECONDS; DELETE removes the file and keeps the row; retention removes old
// files. Sweeps every second, a 2 s wait after the end (the service defaults to 10 s and 30 s).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { vttTime } from '../../src/recordings/captions.ts';
import { NO_MEDIA_REASON } from '../../src/recordings/index.ts';
import { recordingParts, recordings } from '../../src/recordings/schema.ts';
import { sessionTranscripts } from '../../src/sessions/schema.ts';
import { freshBucket, type TestBucket } from '../support/s3.ts';
import { oneEngine, startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { eventually } from '../support/visitor.ts';
import { LOOPBACK_WEBHOOKS_ENV, subscribedReceiver } from '../support/webhook-subscription.ts';
import type { WebhookReceiver } from '../support/webhooks.ts';
import { cut, fragmentedMp4, probeFile, type RecordedSession, recordedSession, sendPart } from './support.ts';

interface RecordingBody {
  session_id: string;
  status: string;
  reason: string | null;
  duration_seconds: number | null;
  size_bytes: number | null;
  store: string | null;
  download_url: string | null;
  object_key: string | null;
  created_at: string;
  ready_at: string | null;
  deleted_at: string | null;
}

describe.each(oneEngine('postgres'))('recordings joined on %s with the S3 store', (engine) => {
  let service: TestService;
  let account: TestAccount;
  let bucket: TestBucket;
  let receiver: WebhookReceiver;
  let secret: string;
  let first: Uint8Array;
  let second: Uint8Array;

  beforeAll(async () => {
    [first, second] = await Promise.all([fragmentedMp4(3), fragmentedMp4(2, '320x240', 660)]);
    bucket = await freshBucket();
    service = await startTestService(engine, {
      env: {
        ...bucket.env('svc/'),
        RECORDING_SWEEP_INTERVAL_SECONDS: '1',
        RECORDING_FINISH_WAIT_SECONDS: '2',
        ...LOOPBACK_WEBHOOKS_ENV,
      },
    });
    account = await service.account();
    ({ receiver, secret } = await subscribedReceiver(account, ['recording.ready', 'recording.failed']));
  }, 60_000);
  afterAll(async () => {
    receiver?.stop();
    await service?.stop();
  });

  const read = async (id: string) => {
    const answer = await account.call('GET', `/v1/sessions/${id}/recording`);
    expect(answer.status).toBe(200);
    return (await answer.json()) as RecordingBody;
  };
  const settled = (id: string) =>
    eventually(
      async () => {
        const body = await read(id);
        return body.status === 'ready' || body.status === 'failed' ? body : undefined;
      },
      20_000,
      `the recording of ${id} to be joined`,
    );
  const events = (type: string, id: string) =>
    receiver.verified('/hooks', secret).filter((event) => event.type === type && event.data.session_id === id);
  const storedUnder = (id: string) => bucket.keys(`svc/recordings/${id}/`);

  let joined: RecordedSession;
  let firstLink: string;

  test('two parts (a failover) become one MP4: H.264 and AAC, as long as both, served with byte ranges', async () => {
    joined = await recordedSession(service, account.accountId);
    const a = cut(first, 5);
    const b = cut(second, 4);
    // The first job recorded 3 s; the second began 2.5 s after it stopped (the failover's gap).
    const began = Date.now() - 10_000;
    joined.startPart('AJ_first', began);
    joined.startPart('AJ_second', began + 5_500);
    // Out of order, and one chunk twice (a retry): the part is whole all the same.
    await sendPart(joined, 'AJ_first', [a[0]!, a[1]!]);
    expect((await joined.chunk('AJ_first', 4, a[4]!)).status).toBe(200);
    expect((await joined.chunk('AJ_first', 2, a[2]!)).status).toBe(200);
    expect((await joined.chunk('AJ_first', 3, a[3]!)).status).toBe(200);
    expect((await joined.chunk('AJ_first', 3, a[3]!)).status).toBe(200);
    expect((await joined.done('AJ_first', 5, 3000)).status).toBe(200);
    await Bun.sleep(20); // the second part's first chunk arrives later: it plays second
    await sendPart(joined, 'AJ_second', b);
    expect((await joined.done('AJ_second', 4, 2000)).status).toBe(200);

    const parts = await service.services.database.db
      .select()
      .from(recordingParts)
      .where(eq(recordingParts.sessionId, joined.id));
    expect(parts.map((p) => [p.part, p.chunksReceived, p.chunks]).sort()).toEqual([
      ['AJ_first', 5, 5],
      ['AJ_second', 4, 4],
    ]);
    expect((await storedUnder(joined.id)).length).toBe(9);
    // Not joined while the session runs.
    await Bun.sleep(1500);
    expect((await read(joined.id)).status).toBe('recording');

    await joined.end();
    const ready = await settled(joined.id);
    expect(ready).toMatchObject({
      session_id: joined.id,
      status: 'ready',
      reason: null,
      store: 'service',
      object_key: null,
      deleted_at: null,
    });
    expect(ready.duration_seconds!).toBeGreaterThan(4.5);
    expect(ready.duration_seconds!).toBeLessThan(5.6);
    // Every part said done with all its chunks: no wait for the finish timeout was needed.
    expect(Date.parse(ready.ready_at!)).toBeGreaterThan(Date.parse(ready.created_at));
    // The chunks go once the file is stored (just after it reads ready); the file is in the service's bucket.
    const file = `svc/recordings/${joined.id}/recording.mp4`;
    await eventually(async () => (await storedUnder(joined.id)).join() === file, 5000, 'the chunks removed');

    firstLink = ready.download_url!;
    const whole = await fetch(firstLink);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('video/mp4');
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    const bytes = new Uint8Array(await whole.arrayBuffer());
    expect(bytes.byteLength).toBe(ready.size_bytes!);
    const copy = join(service.dataDir, 'joined.mp4');
    await Bun.write(copy, bytes);
    const probed = await probeFile(copy);
    expect(probed.streams.map((s) => s.codec_name).sort()).toEqual(['aac', 'h264']);
    expect(probed.streams.find((s) => s.codec_type === 'video')).toMatchObject({ width: 320, height: 240 });
    expect(Number(probed.format.duration)).toBeCloseTo(5, 0);
    // faststart: the index (moov) before the media (mdat).
    const text = new TextDecoder('latin1').decode(bytes.subarray(0, 4096));
    expect(text.indexOf('moov')).toBeGreaterThan(-1);
    expect(text.indexOf('moov')).toBeLessThan(text.indexOf('mdat') === -1 ? 4096 : text.indexOf('mdat'));

    const range = await fetch(firstLink, { headers: { range: 'bytes=100-199' } });
    expect(range.status).toBe(206);
    expect(range.headers.get('content-range')).toBe(`bytes 100-199/${bytes.byteLength}`);
    expect(range.headers.get('content-type')).toBe('video/mp4');
    expect(new Uint8Array(await range.arrayBuffer())).toEqual(bytes.subarray(100, 200));
    const tail = await fetch(firstLink, { headers: { range: 'bytes=-16' } });
    expect(tail.status).toBe(206);
    expect(new Uint8Array(await tail.arrayBuffer())).toEqual(bytes.subarray(bytes.byteLength - 16));
    const past = await fetch(firstLink, { headers: { range: `bytes=${bytes.byteLength}-` } });
    expect(past.status).toBe(416);
    expect(past.headers.get('content-range')).toBe(`bytes */${bytes.byteLength}`);

    const [event] = await receiver.waitFor('recording.ready', () => {
      const found = events('recording.ready', joined.id);
      return found.length ? found : undefined;
    });
    expect(event!.data).toEqual({
      session_id: joined.id,
      identity_id: null,
      duration_seconds: ready.duration_seconds,
      size_bytes: ready.size_bytes,
      store: 'service',
      object_key: null,
    });
    // Once joined, the recording takes no more chunks.
    expect((await joined.chunk('AJ_second', 4, b[0]!)).status).toBe(409);

    // Each part began when its job said and lasts in the file as long as it played: captions
    // lay the file on the session's clock with them, so a turn after the gap is where it is
    // heard in the file (0.5 s into the second part), not 2.5 s later.
    const timeline = await service.services.database.db
      .select()
      .from(recordingParts)
      .where(eq(recordingParts.sessionId, joined.id))
      .orderBy(recordingParts.startedAt);
    expect(timeline.map((p) => [p.part, p.startedAt.getTime() - began])).toEqual([
      ['AJ_first', 0],
      ['AJ_second', 5_500],
    ]);
    const [firstMs, secondMs] = timeline.map((p) => p.joinedMs!);
    expect(firstMs).toBeGreaterThan(2_800);
    expect(secondMs).toBeGreaterThan(1_800);
    const turns: [string, 'agent' | 'user', string, number][] = [
      ['t1', 'agent', 'Before.', 1_000],
      ['t2', 'user', 'After.', 6_000],
      ['t3', 'agent', 'In the gap.', 4_000],
    ];
    await service.services.database.db.insert(sessionTranscripts).values(
      turns.map(([turnId, role, text, at]) => ({
        sessionId: joined.id,
        turnId,
        role,
        text,
        startedAt: new Date(began + at),
        endedAt: new Date(began + at + 1_000),
      })),
    );
    const captions = await (await account.call('GET', `/v1/sessions/${joined.id}/captions.vtt`)).text();
    const cue = (text: string) =>
      captions
        .split('\n\n')
        .find((c) => c.includes(text))!
        .split('\n')[1];
    expect(cue('Before.')).toBe('00:00:01.000 --> 00:00:02.000');
    expect(cue('After.')).toBe(`${vttTime(firstMs! + 500)} --> ${vttTime(firstMs! + 1_500)}`);
    // Said while no job recorded: shown where the second part begins.
    expect(cue('In the gap.')).toBe(`${vttTime(firstMs!)} --> ${vttTime(firstMs! + 100)}`);
  }, 40_000);

  test('a session recorded without frames of ours (no avatar): its parts join into one MP4 of the voices alone', async () => {
    const voices = await recordedSession(service, account.accountId);
    await sendPart(voices, 'AJ_voice_a', cut(await fragmentedMp4(3, null, 330), 3));
    expect((await voices.done('AJ_voice_a', 3, 3000)).status).toBe(200);
    await sendPart(voices, 'AJ_voice_b', cut(await fragmentedMp4(2, null, 550), 2));
    expect((await voices.done('AJ_voice_b', 2, 2000)).status).toBe(200);
    await voices.end();
    const ready = await settled(voices.id);
    expect(ready).toMatchObject({ status: 'ready', reason: null });
    const copy = join(service.dataDir, 'voices.mp4');
    await Bun.write(copy, new Uint8Array(await (await fetch(ready.download_url!)).arrayBuffer()));
    const probed = await probeFile(copy);
    expect(probed.streams.map((s) => [s.codec_type, s.codec_name])).toEqual([['audio', 'aac']]);
    expect(Number(probed.format.duration)).toBeCloseTo(5, 0);
  }, 30_000);

  test('DELETE removes the file and keeps the recording, with deleted_at; its link answers 404', async () => {
    expect((await account.call('DELETE', `/v1/sessions/${joined.id}/recording`)).status).toBe(204);
    const gone = await read(joined.id);
    expect(gone).toMatchObject({ status: 'ready', download_url: null, store: 'service' });
    expect(gone.deleted_at).not.toBeNull();
    expect((await fetch(firstLink)).status).toBe(404);
    expect(await storedUnder(joined.id)).toEqual([]);
    // Again: nothing left to delete, the same answer.
    expect((await account.call('DELETE', `/v1/sessions/${joined.id}/recording`)).status).toBe(204);
    expect((await read(joined.id)).deleted_at).toBe(gone.deleted_at);
  });

  test('no media at all: failed, with the reason, and recording.failed', async () => {
    const empty = await recordedSession(service, account.accountId);
    expect((await account.call('DELETE', `/v1/sessions/${empty.id}/recording`)).status).toBe(409);
    await empty.end();
    const failed = await settled(empty.id);
    expect(failed).toMatchObject({ status: 'failed', reason: NO_MEDIA_REASON, download_url: null, size_bytes: null });
    const [event] = await receiver.waitFor('recording.failed', () => {
      const found = events('recording.failed', empty.id);
      return found.length ? found : undefined;
    });
    expect(event!.data).toEqual({ session_id: empty.id, identity_id: null, reason: NO_MEDIA_REASON });
    // A failed recording can be deleted (nothing to remove but the mark).
    expect((await account.call('DELETE', `/v1/sessions/${empty.id}/recording`)).status).toBe(204);
  }, 30_000);

  let lost: RecordedSession;

  test('a part that never says done (its worker died) is joined once the wait after the end ran out', async () => {
    lost = await recordedSession(service, account.accountId);
    await sendPart(lost, 'AJ_lost', cut(first, 3));
    await lost.end();
    const endedAt = Date.now();
    await Bun.sleep(1200);
    expect((await read(lost.id)).status).toBe('recording');
    const ready = await settled(lost.id);
    expect(ready.status).toBe('ready');
    expect(Date.now() - endedAt).toBeGreaterThanOrEqual(2000);
    expect(ready.duration_seconds!).toBeCloseTo(3, 0);
  }, 30_000);

  test('a part with a chunk missing in the middle: what runs from its start is joined', async () => {
    const gap = await recordedSession(service, account.accountId);
    const chunks = cut(first, 6);
    for (const n of [0, 1, 2, 4, 5]) expect((await gap.chunk('AJ_gap', n, chunks[n]!)).status).toBe(200);
    expect((await gap.done('AJ_gap', 6, 3000)).status).toBe(200);
    await gap.end();
    const ready = await settled(gap.id);
    expect(ready.status).toBe('ready');
    expect(ready.duration_seconds!).toBeGreaterThan(0);
    expect(ready.duration_seconds!).toBeLessThan(3);
  }, 30_000);

  test('retention: a file older than RECORDING_RETENTION_DAYS is removed by the sweep, the row stays', async () => {
    const db = service.services.database.db;
    await db
      .update(recordings)
      .set({ readyAt: sql`now() - make_interval(days => ${service.config.recordings.retentionDays + 1})` })
      .where(eq(recordings.sessionId, lost.id));
    const removed = await eventually(
      async () => {
        const body = await read(lost.id);
        return body.deleted_at ? body : undefined;
      },
      10_000,
      'the retention sweep',
    );
    expect(removed).toMatchObject({ status: 'ready', download_url: null });
    expect(await storedUnder(lost.id)).toEqual([]);
  }, 20_000);
});
