// The job's chunk and part routes as a door (issue 43), and the captions, on PGlite and the
// local store (docs/testing.md#engines: no media is joined here): only the session's own report
// token sends chunks, a chunk is bounded by RECORDING_CHUNK_MAX_BYTES before it is read while
// reports keep their 256 KB, parts and numbers are checked, a chunk sent twice is stored once,
// and nothing is taken for a session not recorded or a recording already joined. Captions: the
// whole conversation as WebVTT, escaped, for any session of the account.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { connect } from 'node:net';
import { eq } from 'drizzle-orm';
import { RECORDING_CHUNK_MAX_BYTES, recordingChunkPath } from '../../src/contract/recordings.ts';
import { fileTimeOf } from '../../src/recordings/captions.ts';
import { partStart } from '../../src/recordings/intake.ts';
import { recordingParts, recordings } from '../../src/recordings/schema.ts';
import { sessions, sessionTranscripts } from '../../src/sessions/schema.ts';
import { oneEngine, startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { recordedSession } from './support.ts';

/** The status line a raw request gets (headers only, its body never sent). */
function statusOfHeadersOnly(url: string, head: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(head));
    socket.once('data', (data) => {
      resolve(data.toString('latin1').split('\r\n')[0]!);
      socket.destroy();
    });
    socket.once('error', reject);
    setTimeout(() => reject(new Error('no answer before the body')), 5000).unref();
  });
}

describe.each(oneEngine('pglite'))('recording intake and captions on %s', (engine) => {
  let service: TestService;
  let account: TestAccount;

  beforeAll(async () => {
    // The sweep is not the point here: it should not join anything while the tests look.
    service = await startTestService(engine, { env: { RECORDING_SWEEP_INTERVAL_SECONDS: '3600' } });
    account = await service.account();
  }, 60_000);
  afterAll(() => service?.stop());

  const bytes = (n: number, fill = 7) => new Uint8Array(n).fill(fill);
  const chunkKeys = (id: string) => service.services.store.list(`recordings/${id}/`);

  test("only the session's own report token sends chunks; anonymous and others' tokens are 401", async () => {
    const mine = await recordedSession(service, account.accountId);
    const other = await recordedSession(service, account.accountId);
    expect((await mine.chunk('AJ_a', 0, bytes(10), other.token)).status).toBe(401);
    const anonymous = await fetch(`${service.url}${recordingChunkPath(mine.id, 'AJ_a', 0)}`, {
      method: 'PUT',
      body: bytes(10),
      headers: { 'content-type': 'application/octet-stream' },
    });
    expect(anonymous.status).toBe(401);
    // A secret API key is no report token either.
    expect((await mine.chunk('AJ_a', 0, bytes(10), account.apiKey)).status).toBe(401);
    expect(await chunkKeys(mine.id)).toEqual([]);
    // Without a length, refused before reading (every job sends one).
    const head = `PUT ${recordingChunkPath(mine.id, 'AJ_a', 0)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${mine.token}\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n`;
    expect(await statusOfHeadersOnly(service.url, head)).toMatch(/^HTTP\/1\.1 411/);
  });

  test('a chunk is bounded by RECORDING_CHUNK_MAX_BYTES, refused before it is read; reports keep 256 KB', async () => {
    const session = await recordedSession(service, account.accountId);
    // The largest chunk is taken.
    expect((await session.chunk('AJ_b', 0, bytes(RECORDING_CHUNK_MAX_BYTES))).status).toBe(200);
    // One byte more is 413 as soon as its headers are in: the body is never sent.
    const head = `PUT ${recordingChunkPath(session.id, 'AJ_b', 1)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${session.token}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${RECORDING_CHUNK_MAX_BYTES + 1}\r\n\r\n`;
    expect(await statusOfHeadersOnly(service.url, head)).toMatch(/^HTTP\/1\.1 413/);
    expect((await session.chunk('AJ_b', 1, bytes(RECORDING_CHUNK_MAX_BYTES + 1))).status).toBe(413);
    expect((await chunkKeys(session.id)).length).toBe(1);
    // The chunk's bound is the chunk route's only: a report of 300 KB is still too large.
    const report = await fetch(`${service.url}/internal/sessions/${session.id}/reports`, {
      method: 'POST',
      body: JSON.stringify({ type: 'agent_joined', padding: 'x'.repeat(300 * 1024) }),
      headers: { authorization: `Bearer ${session.token}`, 'content-type': 'application/json' },
    });
    expect(report.status).toBe(413);
  }, 20_000);

  test('part names and chunk numbers are checked (422); an empty chunk or one of another type is refused', async () => {
    const session = await recordedSession(service, account.accountId);
    const put = (part: string, chunk: string, body: BodyInit = bytes(5), type = 'application/octet-stream') =>
      fetch(`${service.url}/internal/sessions/${session.id}/recording/parts/${part}/chunks/${chunk}`, {
        method: 'PUT',
        body,
        headers: { authorization: `Bearer ${session.token}`, 'content-type': type },
      });
    for (const [part, chunk] of [
      ['bad-name', '0'],
      ['a'.repeat(65), '0'],
      ['AJ_c', 'x'],
      ['AJ_c', '-1'],
      ['AJ_c', '1e3'],
      ['AJ_c', '100000'],
    ] as const) {
      const answer = await put(part, chunk);
      expect([part, chunk, answer.status]).toEqual([part, chunk, 422]);
      expect(Array.isArray(((await answer.json()) as { detail: unknown }).detail)).toBe(true);
    }
    expect((await put('AJ_c', '0', new Uint8Array(0))).status).toBe(422);
    expect((await put('AJ_c', '0', '{"a":1}', 'application/json')).status).toBe(415);
    const done = await fetch(`${service.url}/internal/sessions/${session.id}/recording/parts/AJ_c/done`, {
      method: 'POST',
      body: JSON.stringify({ chunks: -1, duration_ms: 0 }),
      headers: { authorization: `Bearer ${session.token}`, 'content-type': 'application/json' },
    });
    expect(done.status).toBe(422);
    expect(await chunkKeys(session.id)).toEqual([]);
  });

  test('a chunk sent twice is stored once; a part counts up to its highest chunk; done says its count', async () => {
    const session = await recordedSession(service, account.accountId);
    expect((await session.chunk('AJ_d', 2, bytes(8, 2))).status).toBe(200);
    expect((await session.chunk('AJ_d', 0, bytes(8, 0))).status).toBe(200);
    expect((await session.chunk('AJ_d', 0, bytes(8, 0))).status).toBe(200);
    expect(await chunkKeys(session.id)).toEqual([
      `recordings/${session.id}/parts/AJ_d/000000.m4s`,
      `recordings/${session.id}/parts/AJ_d/000002.m4s`,
    ]);
    expect((await session.done('AJ_d', 3, 6000)).status).toBe(200);
    const [part] = await service.services.database.db
      .select()
      .from(recordingParts)
      .where(eq(recordingParts.sessionId, session.id));
    expect(part).toMatchObject({ part: 'AJ_d', chunksReceived: 3, chunks: 3, durationMs: 6000 });
    expect(part!.doneAt).toBeInstanceOf(Date);
  });

  test('nothing is taken for a session not recorded, or a recording already joined (409)', async () => {
    const unrecorded = await recordedSession(service, account.accountId, { recorded: false });
    expect((await unrecorded.chunk('AJ_e', 0, bytes(5))).status).toBe(409);
    expect((await unrecorded.done('AJ_e', 1)).status).toBe(409);
    const joining = await recordedSession(service, account.accountId);
    await service.services.database.db
      .update(recordings)
      .set({ status: 'processing' })
      .where(eq(recordings.sessionId, joining.id));
    expect((await joining.chunk('AJ_e', 0, bytes(5))).status).toBe(409);
    expect((await joining.done('AJ_e', 1)).status).toBe(409);
    expect(await chunkKeys(joining.id)).toEqual([]);
  });

  test('the recording reads 404 when not recorded or not the account’s, 401 without a key; DELETE while recording is 409', async () => {
    const unrecorded = await recordedSession(service, account.accountId, { recorded: false });
    expect((await account.call('GET', `/v1/sessions/${unrecorded.id}/recording`)).status).toBe(404);
    const recorded = await recordedSession(service, account.accountId);
    const body = (await (await account.call('GET', `/v1/sessions/${recorded.id}/recording`)).json()) as Record<
      string,
      unknown
    >;
    expect(body).toMatchObject({
      session_id: recorded.id,
      status: 'recording',
      reason: null,
      duration_seconds: null,
      size_bytes: null,
      store: null,
      download_url: null,
      object_key: null,
      ready_at: null,
      deleted_at: null,
    });
    const stranger = await service.account();
    expect((await stranger.call('GET', `/v1/sessions/${recorded.id}/recording`)).status).toBe(404);
    expect((await stranger.call('DELETE', `/v1/sessions/${recorded.id}/recording`)).status).toBe(404);
    expect((await stranger.call('GET', `/v1/sessions/${recorded.id}/captions.vtt`)).status).toBe(404);
    expect((await service.call('GET', `/v1/sessions/${recorded.id}/recording`)).status).toBe(401);
    expect((await account.call('DELETE', `/v1/sessions/${recorded.id}/recording`)).status).toBe(409);
  });

  test('captions: every visitor and agent turn as a WebVTT cue, timed from the start of streaming, escaped', async () => {
    // Any session of the account: this one is not recorded.
    const session = await recordedSession(service, account.accountId, { recorded: false });
    const db = service.services.database.db;
    const streaming = new Date('2026-11-24T09:30:04.000Z');
    await db.update(sessions).set({ streamingStartedAt: streaming }).where(eq(sessions.id, session.id));
    const at = (ms: number) => new Date(streaming.getTime() + ms);
    await db.insert(sessionTranscripts).values([
      {
        sessionId: session.id,
        turnId: 't1',
        role: 'agent',
        text: 'Hello! How can I help?',
        startedAt: at(500),
        endedAt: at(2250),
      },
      {
        sessionId: session.id,
        turnId: 't2',
        role: 'user',
        text: 'Is <b>2 & 3</b> --> 5?\n\nSure.',
        startedAt: at(3000),
        endedAt: at(4100),
      },
      {
        sessionId: session.id,
        turnId: 't3',
        role: 'tool',
        text: 'opening_hours()',
        startedAt: at(4200),
        endedAt: at(4300),
      },
      { sessionId: session.id, turnId: 't4', role: 'agent', text: 'No.', startedAt: at(3_725_000), endedAt: null },
    ]);
    const answer = await account.call('GET', `/v1/sessions/${session.id}/captions.vtt`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/vtt; charset=utf-8');
    expect(await answer.text()).toBe(
      [
        'WEBVTT',
        '',
        '1',
        '00:00:00.500 --> 00:00:02.250',
        '<v Agent>Agent: Hello! How can I help?</v>',
        '',
        '2',
        '00:00:03.000 --> 00:00:04.100',
        '<v Visitor>Visitor: Is &lt;b&gt;2 &amp; 3&lt;/b&gt; --&gt; 5?',
        'Sure.</v>',
        '',
        '3',
        '01:02:05.000 --> 01:02:06.000',
        '<v Agent>Agent: No.</v>',
        '',
        '',
      ].join('\n'),
    );
    // A session without turns: a valid, empty file.
    const quiet = await recordedSession(service, account.accountId);
    expect(await (await account.call('GET', `/v1/sessions/${quiet.id}/captions.vtt`)).text()).toBe('WEBVTT\n\n');
    expect((await account.call('GET', '/v1/sessions/ses_nope/captions.vtt')).status).toBe(404);
    expect((await service.call('GET', `/v1/sessions/${quiet.id}/captions.vtt`)).status).toBe(401);
  });
});

describe("a part's place on the session's clock", () => {
  const created = new Date('2026-11-29T10:00:00.000Z');
  const now = new Date('2026-11-29T10:05:00.000Z');

  test('a part begins when its job says, if that lies between the session’s creation and now (a minute of skew either way); else when its first chunk came', () => {
    expect(partStart(String(created.getTime() + 2_000), created, now)).toEqual(new Date(created.getTime() + 2_000));
    expect(partStart(String(created.getTime() - 30_000), created, now)).toEqual(new Date(created.getTime() - 30_000));
    // A clock ahead of ours: no later than now.
    expect(partStart(String(now.getTime() + 30_000), created, now)).toEqual(now);
    for (const said of [
      null,
      '',
      'soon',
      '-5',
      '1e12',
      String(created.getTime() - 120_000),
      String(now.getTime() + 120_000),
    ])
      expect(partStart(said, created, now)).toEqual(now);
  });

  test('a moment falls in the joined file where its part plays; one in a gap where the next part begins, one past the last at the end', () => {
    const at = (ms: number) => new Date(created.getTime() + ms);
    const parts = [
      { startedAt: at(0), joinedMs: 3_000 },
      { startedAt: at(5_500), joinedMs: 2_000 },
    ];
    expect(fileTimeOf(at(-1_000), parts)).toBe(0);
    expect(fileTimeOf(at(1_000), parts)).toBe(1_000);
    expect(fileTimeOf(at(3_000), parts)).toBe(3_000);
    expect(fileTimeOf(at(4_000), parts)).toBe(3_000);
    expect(fileTimeOf(at(6_000), parts)).toBe(3_500);
    expect(fileTimeOf(at(60_000), parts)).toBe(5_000);
    expect(fileTimeOf(at(1_000), [])).toBe(0);
  });
});
