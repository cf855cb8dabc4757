// The agent worker against a real local LiveKit server: explicit dispatch, the avatar
// track as a visitor sees it, and the reports a stand-in control plane receives.
// biome-ignore-all lint/style/noExcessiveLinesPerFile: one agent worker and its warm job processes shared by every test: split, each part would start its own
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  AudioSource,
  LocalAudioTrack,
  ParticipantKind,
  type RemoteParticipant,
  type RemoteTrack,
  type RemoteTrackPublication,
  Room,
  RoomEvent,
  TrackKind,
  TrackPublishOptions,
  TrackSource,
  VideoStream,
} from '@livekit/rtc-node';
import { AccessToken, AgentDispatchClient, RoomServiceClient } from 'livekit-server-sdk';
import { type AgentWorker, startAgentWorker } from '../../agent/index.ts';
import { DEFAULT_AGENT_NAME as AGENT_NAME } from '../../src/config.ts';
import type { DispatchMetadata } from '../../src/contract/index.ts';
import { httpUrlOf } from '../../src/livekit/connection.ts';
import { LocalLivekitServer, livekitBinary } from '../../src/livekit/index.ts';
import { childProcesses, jobProcesses, tempDir } from '../support/processes.ts';

const BILLING_INTERVAL_MS = 1_000;
const REPORT_TOKEN = 'report-token-for-tests';

interface ReceivedReport {
  sessionId: string;
  authorization: string | null;
  body: { type: string; index?: number; at?: string };
  /** performance.now() on arrival. */
  at: number;
  /** Date.now() on arrival: compared with the job's own timestamps. */
  wallAt: number;
}

const dirs: string[] = [];
let livekit: LocalLivekitServer;
let worker: AgentWorker;
let controlPlane: ReturnType<typeof Bun.serve>;
let rooms: RoomServiceClient;
let dispatches: AgentDispatchClient;
const reports: ReceivedReport[] = [];
const visitors: Room[] = [];
const roomNames = new Set<string>();

/** The stand-in control plane: records reports, serves the identity's portrait. */
function startControlPlane() {
  const portrait = Bun.file(join(import.meta.dir, '../fixtures/astronaut.png'));
  return Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    routes: {
      '/internal/sessions/:session_id/reports': {
        POST: async (request) => {
          reports.push({
            sessionId: request.params.session_id,
            authorization: request.headers.get('authorization'),
            body: await request.json(),
            at: performance.now(),
            wallAt: Date.now(),
          });
          return Response.json({ ok: true });
        },
      },
      '/assets/render.png': () => new Response(portrait),
    },
    fetch: () => new Response('not found', { status: 404 }),
  });
}

let sessionCounter = 0;
function newSession(overrides: Partial<DispatchMetadata> = {}): DispatchMetadata {
  const sessionId = `ses_test${Date.now()}${sessionCounter++}`;
  return {
    session_id: sessionId,
    report_url: `http://127.0.0.1:${controlPlane.port}/internal/sessions/${sessionId}/reports`,
    report_token: REPORT_TOKEN,
    avatar_enabled: true,
    visitor_identity: `visitor_${sessionId}`,
    billing_interval_seconds: BILLING_INTERVAL_MS / 1000,
    identity: {
      identity_id: 'idn_test',
      name: 'Ada',
      prompt: 'You are Ada.',
      language: 'en',
      image_url: `http://127.0.0.1:${controlPlane.port}/assets/render.png`,
      audio_url: null,
    },
    voice: null,
    language: 'en',
    visual_awareness: false,
    form_factor: 'phone',
    ...overrides,
  };
}

function createRoom(name: string) {
  roomNames.add(name);
  // Like the control plane: the room's metadata names its session, which the job checks.
  return rooms.createRoom({
    name,
    emptyTimeout: 60,
    departureTimeout: 5,
    metadata: JSON.stringify({ session_id: name }),
  });
}

async function deleteRoom(name: string) {
  roomNames.delete(name);
  await rooms.deleteRoom(name).catch(() => undefined);
}

async function dispatchSession(metadata: DispatchMetadata | string, roomName: string) {
  await createRoom(roomName);
  await dispatches.createDispatch(roomName, AGENT_NAME, {
    metadata: typeof metadata === 'string' ? metadata : JSON.stringify(metadata),
  });
}

/**
 * Joins like a browser visitor: connected, and publishing a microphone. LiveKit tells others
 * at once about participants that publish; those that only subscribe are batched (up to 3 s).
 */
async function joinAsVisitor(roomName: string, identity: string): Promise<Room> {
  const token = new AccessToken(livekit.apiKey, livekit.apiSecret, { identity, ttl: 600 });
  token.addGrant({ room: roomName, roomJoin: true, canPublish: true, canSubscribe: true });
  const room = new Room();
  visitors.push(room);
  await room.connect(livekit.url, await token.toJwt(), { autoSubscribe: true, dynacast: false });
  const microphone = LocalAudioTrack.createAudioTrack('microphone', new AudioSource(48_000, 1));
  await room.localParticipant!.publishTrack(
    microphone,
    new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE }),
  );
  return room;
}

async function waitFor<T>(what: string, probe: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

/** Resolves with the first video track subscribed in `room`, with its publication and publisher. */
function nextVideoTrack(
  room: Room,
): Promise<{ track: RemoteTrack; publication: RemoteTrackPublication; participant: RemoteParticipant }> {
  for (const participant of room.remoteParticipants.values()) {
    for (const publication of participant.trackPublications.values()) {
      if (publication.kind === TrackKind.KIND_VIDEO && publication.track) {
        return Promise.resolve({ track: publication.track, publication, participant });
      }
    }
  }
  return new Promise((resolve) => {
    const onSubscribed = (track: RemoteTrack, publication: RemoteTrackPublication, participant: RemoteParticipant) => {
      if (track.kind !== TrackKind.KIND_VIDEO) return;
      room.off(RoomEvent.TrackSubscribed, onSubscribed);
      resolve({ track, publication, participant });
    };
    room.on(RoomEvent.TrackSubscribed, onSubscribed);
  });
}

/**
 * Counts the track's frames for `ms` from the first one (the stream needs a moment to
 * start: a keyframe, the bandwidth estimate); returns the count and the sizes seen.
 */
/**
 * A steady stream (25 fps when idle; its rate under load is bench/sessions' figure), read over
 * 4 s: its first seconds share the cores with the job's start, and beside a CPU-heavy suite they
 * gave 14 fps for 2 s (run 96; 8 fps in run 7).
 */
async function steadyFrames(track: RemoteTrack) {
  const frames = await readFrames(track, 4_000);
  expect(frames.count, `${frames.count} frames in 4 s`).toBeGreaterThanOrEqual(60);
  return frames;
}

async function readFrames(track: RemoteTrack, ms: number) {
  const reader = new VideoStream(track).getReader();
  const sizes = new Map<string, number>();
  let count = 0;
  let stopAt = Infinity;
  const giveUp = setTimeout(() => void reader.cancel(), ms + 10_000);
  try {
    while (performance.now() < stopAt) {
      const { value, done } = await reader.read();
      if (done) break;
      if (count === 0) stopAt = performance.now() + ms;
      count++;
      const size = `${value.frame.width}x${value.frame.height}`;
      sizes.set(size, (sizes.get(size) ?? 0) + 1);
    }
  } finally {
    clearTimeout(giveUp);
    await reader.cancel().catch(() => undefined);
  }
  return { count, sizes };
}

/**
 * The frames are the published size, or (while WebRTC adapts to a busy CPU or a low bandwidth
 * estimate, which a publisher cannot turn off) a smaller copy of the same shape: most frames are
 * width×height and every one keeps its aspect ratio.
 */
function expectFrameSize(sizes: Map<string, number>, width: number, height: number) {
  const bySeen = [...sizes.entries()].sort((a, b) => b[1] - a[1]);
  expect(bySeen[0]?.[0], `sizes seen: ${JSON.stringify(bySeen)}`).toBe(`${width}x${height}`);
  for (const [size] of bySeen) {
    const [w, h] = size.split('x').map(Number) as [number, number];
    expect(Math.abs(w / h - width / height), `sizes seen: ${JSON.stringify(bySeen)}`).toBeLessThan(0.02);
  }
}

const reportsOf = (sessionId: string) => reports.filter((r) => r.sessionId === sessionId);
const minuteIndices = (sessionId: string) =>
  reportsOf(sessionId)
    .filter((r) => r.body.type === 'minute')
    .map((r) => r.body.index!);

/** Slots of this worker, and so its job processes once warm: one forked ahead for each slot no job holds. */
const SLOTS = 2;

/** Once earlier sessions are gone and their processes replaced: the pids of the warm processes, one per slot. */
async function everySlotWarm(): Promise<number[]> {
  await waitFor('a warm job process for every slot', () => worker.warmProcesses() === SLOTS, 30_000);
  const pids = jobProcesses();
  expect(pids).toHaveLength(SLOTS);
  return pids;
}

beforeAll(async () => {
  controlPlane = startControlPlane();
  livekit = await LocalLivekitServer.start({
    binary: livekitBinary(),
    dataDir: await tempDir(dirs, 'likeness-agent-livekit-'),
    log: () => {},
  });
  rooms = new RoomServiceClient(httpUrlOf(livekit.url), livekit.apiKey, livekit.apiSecret);
  dispatches = new AgentDispatchClient(httpUrlOf(livekit.url), livekit.apiKey, livekit.apiSecret);
  worker = await startAgentWorker({
    wsURL: livekit.url,
    apiKey: livekit.apiKey,
    apiSecret: livekit.apiSecret,
    agentName: AGENT_NAME,
    maxConcurrentJobs: SLOTS,
    logLevel: (process.env.AGENT_LOG_LEVEL as 'debug' | undefined) ?? 'warn',
  });
}, 60_000);

afterAll(async () => {
  for (const room of visitors) await room.disconnect().catch(() => undefined);
  for (const name of roomNames) await deleteRoom(name);
  await worker?.stop();
  await livekit?.stop();
  await controlPlane?.stop(true);
  // No rtc-node dispose() here: bun runs every suite in one process, and a disposed native
  // runtime breaks every later Room.connect (it times out waiting for ReadyForRoomEventRequest).
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  // Nothing the worker or the server started outlives them.
  expect(childProcesses()).toEqual([]);
}, 60_000);

describe('agent worker', () => {
  test('answers its health check once registered', async () => {
    const response = await fetch(worker.healthUrl);
    expect(response.status).toBe(200);
    const info = (await (await fetch(`${worker.healthUrl}/worker`)).json()) as { agent_name: string };
    expect(info.agent_name).toBe(AGENT_NAME);
  });

  test('phone: a portrait avatar streams, and minutes are billed from the first frame while the visitor is in', async () => {
    const session = newSession({ form_factor: 'phone' });
    const roomName = session.session_id;
    try {
      // The visitor is in before the job starts: billing begins with the first frame.
      await createRoom(roomName);
      const joiningAt = performance.now();
      const visitor = await joinAsVisitor(roomName, session.visitor_identity);
      const videoTrack = nextVideoTrack(visitor);
      await dispatches.createDispatch(roomName, AGENT_NAME, { metadata: JSON.stringify(session) });

      const { track, publication, participant } = await videoTrack;
      expect(participant.kind).toBe(ParticipantKind.AGENT);
      expect(publication.name).toBe('avatar');
      expect(publication.source).toBe(TrackSource.SOURCE_CAMERA);

      const frames = await steadyFrames(track);
      expectFrameSize(frames.sizes, 540, 960);
      // Exactly one video track from the agent, and it is the avatar.
      const videos = [...participant.trackPublications.values()].filter((p) => p.kind === TrackKind.KIND_VIDEO);
      expect(videos.map((p) => p.name)).toEqual(['avatar']);

      await waitFor('minute 2', () => minuteIndices(roomName).includes(2));
      const received = reportsOf(roomName);
      expect(received.every((r) => r.authorization === `Bearer ${REPORT_TOKEN}`)).toBe(true);
      expect(received.every((r) => r.at >= joiningAt)).toBe(true);
      // First the job says it is in the room (the control plane stops waiting for an agent),
      // then billing starts with the first frame.
      expect(received.slice(0, 2).map((r) => r.body.type)).toEqual(['agent_joined', 'avatar_streaming']);
      expect(Number.isNaN(Date.parse(received[1]!.body.at!))).toBe(false);
      expect(minuteIndices(roomName).slice(0, 3)).toEqual([0, 1, 2]);
      // Minute n is charged at t0 + n·I, on the grid of the first frame: t0 is the job's own time
      // of it (the report's arrival here lags whenever this process, decoding the video, is busy).
      const t0 = Date.parse(received[1]!.body.at!);
      const lateness = received
        .filter((r) => r.body.type === 'minute')
        .map((report) => report.wallAt - t0 - report.body.index! * BILLING_INTERVAL_MS);
      // Never before its grid point (a few ms for the timestamps' rounding). A grid shifted by an
      // interval makes every report an interval late; one report's arrival may lag that much on
      // a busy machine, so the least late of them is held within the interval.
      for (const late of lateness) expect(late).toBeGreaterThanOrEqual(-5);
      expect(Math.min(...lateness)).toBeLessThan(BILLING_INTERVAL_MS);

      await visitor.disconnect();
      await waitFor('visitor_left', () => reportsOf(roomName).find((r) => r.body.type === 'visitor_left'));
      const minutesAtLeave = minuteIndices(roomName).length;
      await Bun.sleep(2 * BILLING_INTERVAL_MS);
      expect(minuteIndices(roomName).length).toBe(minutesAtLeave);
    } finally {
      await deleteRoom(roomName);
    }
  }, 60_000);

  test('desktop: a landscape avatar; nothing is billed until the visitor joins, then minute 0 at the join and each next one an interval later', async () => {
    const session = newSession({ form_factor: 'desktop' });
    const roomName = session.session_id;
    try {
      await dispatchSession(session, roomName);
      const streaming = await waitFor('avatar_streaming', () =>
        reportsOf(roomName).find((r) => r.body.type === 'avatar_streaming'),
      );
      // Minutes 0–2 pass with nobody in the room.
      await Bun.sleep(2.5 * BILLING_INTERVAL_MS);
      expect(reportsOf(roomName).map((r) => r.body.type)).toEqual(['agent_joined', 'avatar_streaming']);

      const joiningAt = performance.now();
      const visitor = await joinAsVisitor(roomName, session.visitor_identity);
      const { track, participant } = await nextVideoTrack(visitor);
      expect(participant.kind).toBe(ParticipantKind.AGENT);
      const frames = await steadyFrames(track);
      expectFrameSize(frames.sizes, 960, 540);

      await waitFor('four minutes after the join', () => minuteIndices(roomName).length >= 4);
      // Minutes are the visitor's (docs/api.md#credits): numbered from the join, not from the
      // frames nobody saw before it, each the next an interval after the previous.
      expect(minuteIndices(roomName).slice(0, 4)).toEqual([0, 1, 2, 3]);
      const minutes = reportsOf(roomName).filter((r) => r.body.type === 'minute');
      expect(minutes.every((r) => r.at >= joiningAt)).toBe(true);
      // (the join counts once the agent hears of it: the connection and the microphone first)
      expect(minutes[0]!.at - joiningAt).toBeLessThan(3 * BILLING_INTERVAL_MS);
      // Minute n an interval after minute n − 1, on minute 0's grid: measured by their arrival
      // here, which lags while this process decodes the frames above (run 70: minute 1 a second
      // late). A grid shifted by an interval puts every one of them an interval off; one lagging
      // report does not, so the least late of minutes 1–3 is held within the interval.
      const offGrid = minutes
        .slice(1, 4)
        .map((minute, i) => minute.at - minutes[0]!.at - (i + 1) * BILLING_INTERVAL_MS);
      for (const off of offGrid) expect(off).toBeGreaterThan(-BILLING_INTERVAL_MS);
      expect(Math.min(...offGrid)).toBeLessThan(BILLING_INTERVAL_MS);
      expect(streaming.at).toBeLessThan(joiningAt);

      await visitor.disconnect();
      await waitFor('visitor_left', () => reportsOf(roomName).find((r) => r.body.type === 'visitor_left'));
    } finally {
      await deleteRoom(roomName);
    }
  }, 60_000);

  test('a job with invalid metadata shuts down by itself without joining or reporting', async () => {
    const roomName = `ses_invalid${Date.now()}`;
    try {
      // Once earlier sessions are gone, every process is an idle one; one of them takes this job.
      const idle = await everySlotWarm();
      await dispatchSession(JSON.stringify({ session_id: roomName, avatar_enabled: 'yes' }), roomName);
      await waitFor('the job process to exit', () => idle.some((pid) => !jobProcesses().includes(pid)), 10_000);
      expect(await rooms.listParticipants(roomName)).toEqual([]);
      expect(reportsOf(roomName)).toEqual([]);
    } finally {
      await deleteRoom(roomName);
    }
  }, 30_000);

  test('closing a room ends its job process', async () => {
    const session = newSession();
    const roomName = session.session_id;
    const idle = await everySlotWarm();
    try {
      await dispatchSession(session, roomName);
      await waitFor('avatar_streaming', () => reportsOf(roomName).find((r) => r.body.type === 'avatar_streaming'));
      // The job runs in a process forked ahead; none is forked beside it while it runs, as
      // every slot is either running or warm.
      expect(jobProcesses().toSorted()).toEqual(idle.toSorted());
    } finally {
      await deleteRoom(roomName);
    }
    await waitFor('the job process to exit', () => idle.some((pid) => !jobProcesses().includes(pid)), 20_000);
  }, 30_000);

  test('a worker stopped while its idle process is still loading the models stops at once', async () => {
    // This worker's processes all warm: none of them is forked meanwhile.
    const before = await everySlotWarm();
    const other = await startAgentWorker({
      wsURL: livekit.url,
      apiKey: livekit.apiKey,
      apiSecret: livekit.apiSecret,
      agentName: `${AGENT_NAME}-other`,
    });
    // Registered; its idle process is forked and takes seconds to load the offline models.
    const loading = jobProcesses().filter((pid) => !before.includes(pid));
    // One at a time: agents initialises its processes one after another.
    expect(loading).toHaveLength(1);
    const stopping = performance.now();
    await other.stop();
    // agents 1.9 alone would wait out its 15 s shutdown timeout here (the request is lost during prewarm).
    expect(performance.now() - stopping).toBeLessThan(5_000);
    expect(jobProcesses().filter((pid) => loading.includes(pid))).toEqual([]);
  }, 30_000);

  // Last: it stops the worker.
  test('stop() tells running jobs to leave their rooms, and ends every process it forked', async () => {
    const session = newSession();
    const roomName = session.session_id;
    try {
      await createRoom(roomName);
      const visitor = await joinAsVisitor(roomName, session.visitor_identity);
      const { participant: agent } = await (async () => {
        const track = nextVideoTrack(visitor);
        await dispatches.createDispatch(roomName, AGENT_NAME, { metadata: JSON.stringify(session) });
        return track;
      })();
      const agentLeft = new Promise<void>((resolve) =>
        visitor.on(
          RoomEvent.ParticipantDisconnected,
          (p: RemoteParticipant) => p.identity === agent.identity && resolve(),
        ),
      );
      const stopping = performance.now();
      const stopped = worker.stop();
      await agentLeft;
      expect(performance.now() - stopping).toBeLessThan(5_000);
      // The idle replacement forked when this session took the previous process is still
      // loading: it exits at once too (agent/job.ts), so stop() does not wait out a timeout.
      await stopped;
      expect(performance.now() - stopping).toBeLessThan(8_000);
      expect(jobProcesses()).toEqual([]);
      expect(childProcesses().filter((line) => line.includes('bun'))).toEqual([]);
    } finally {
      await deleteRoom(roomName);
    }
  }, 30_000);
});
