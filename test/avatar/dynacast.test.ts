// The face's video is encoded only while someone watches it (agent/job.ts connects with
// dynacast, agents-adapter patch P7): LiveKit pauses the job's video encoder once nobody has
// subscribed to it for its pause delay (5 s), and resumes it when a visitor subscribes. Seen
// from LiveKit's own counters (what its node receives) and from the visitor, who gets frames
// again at once. Without dynacast the job sends ~0.3–1 Mbit/s of video to nobody.
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TrackKind } from '@livekit/rtc-node';
import { AGENT_STATE_ATTRIBUTE } from '../../src/contract/index.ts';
import { LocalLivekitServer, livekitBinary } from '../../src/livekit/index.ts';
import { freeTcpPort } from '../../src/livekit/local-ports.ts';
import { sharedProviderFakes } from '../support/preload.ts';
import { startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { eventually } from '../support/visitor.ts';
import { createAstronaut, joinWatchingVideo, startSession } from './support.ts';

const fakes = sharedProviderFakes();
/** LiveKit's `video.dynacast_pause_delay` (its default): how long an unwatched layer stays on. */
const PAUSE_DELAY_MS = 5_000;
/**
 * LiveKit adds a track's bytes to its counters every 5 s (connectionquality.UpdateInterval): a
 * rate is read over two of them and a little more.
 */
const STATS_INTERVAL_MS = 5_000;
const WINDOW_MS = 2 * STATS_INTERVAL_MS + 1_000;
/** What LiveKit receives per second at most while the face is paused: the agent's voice (Opus) and signalling. */
const PAUSED_MAX_BITS_PER_SECOND = 150_000;

let livekit: LocalLivekitServer;
let dataDir: string;
let prometheusPort: number;
let service: TestService;
let account: TestAccount;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'likeness-dynacast-'));
  prometheusPort = await freeTcpPort('127.0.0.1');
  const port = await freeTcpPort('127.0.0.1');
  livekit = await LocalLivekitServer.start({
    binary: livekitBinary(),
    dataDir,
    webhookUrl: `http://127.0.0.1:${port}/internal/livekit/webhook`,
    prometheusPort,
    log: () => {},
  });
  service = await startTestService('pglite', {
    livekit: 'local',
    agent: true,
    env: {
      ...fakes.env,
      PORT: String(port),
      LIVEKIT_URL: livekit.url,
      LIVEKIT_API_KEY: livekit.apiKey,
      LIVEKIT_API_SECRET: livekit.apiSecret,
      CREDITS_ONBOARDING: '0',
    },
  });
  account = await service.account({ credits: 10_000 });
}, 60_000);
afterAll(async () => {
  await service?.stop();
  await livekit?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

/** Media bytes LiveKit's node has received so far (its Prometheus counter, every label summed). */
async function bytesReceived(): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${prometheusPort}/metrics`)).text();
  let sum = 0;
  for (const match of text.matchAll(/^livekit_packet_bytes\{([^}]*)\} (\S+)$/gm))
    if (match[1]!.includes('direction="incoming"')) sum += Number(match[2]);
  return sum;
}

/** What LiveKit receives per second over `ms`, in bits. */
async function receivedRate(ms: number): Promise<number> {
  const before = await bytesReceived();
  const started = performance.now();
  await Bun.sleep(ms);
  return (((await bytesReceived()) - before) * 8) / ((performance.now() - started) / 1000);
}

test('nobody watching: the face is not encoded; a visitor who turns the video on gets frames at once', async () => {
  fakes.openai.respond(() => 'Hello there.');
  const identity = await createAstronaut(account, { language: 'en' });
  const session = await startSession(account, { identity_id: identity.identity_id, idle_timeout_seconds: 0 });
  const { visitor, videos } = await joinWatchingVideo(session, { audioOnly: true });
  try {
    const agent = await eventually(() => visitor.agent(), 20_000, 'the agent');
    const face = await eventually(
      () => [...agent.trackPublications.values()].find((p) => p.kind === TrackKind.KIND_VIDEO),
      20_000,
      "the face's video published",
    );
    // The greeting said (its voice is media too), then past the pause delay and the counting
    // of what was sent before it.
    await eventually(() => agent.attributes[AGENT_STATE_ATTRIBUTE] === 'listening', 30_000, 'the greeting');
    await Bun.sleep(PAUSE_DELAY_MS + STATS_INTERVAL_MS + 1_000);
    const paused = await receivedRate(WINDOW_MS);

    const subscribedAt = performance.now();
    face.setSubscribed(true);
    const frames = await eventually(() => videos[0]?.frames[0], 10_000, 'a frame of the face');
    const firstFrameMs = frames.at - subscribedAt;
    const watched = await receivedRate(WINDOW_MS);
    // Frames keep coming while watched: the encoder runs at the avatar's rate again.
    const recent = videos[0]!.between(performance.now() - 2_000, performance.now());
    console.log(
      `dynacast: LiveKit received ${Math.round(paused / 1000)} kbit/s unwatched, ${Math.round(watched / 1000)} kbit/s watched; first frame ${Math.round(firstFrameMs)} ms after subscribing`,
    );

    expect({
      paused: paused <= PAUSED_MAX_BITS_PER_SECOND ? 'at most the voice' : `${Math.round(paused)} bit/s`,
    }).toEqual({
      paused: 'at most the voice',
    });
    expect(watched).toBeGreaterThan(Math.max(3 * paused, 200_000));
    expect(firstFrameMs).toBeLessThan(5_000);
    expect(recent.length).toBeGreaterThan(30);
    expect(recent[0]).toMatchObject({ width: 540, height: 960 });
  } finally {
    for (const video of videos) video.close();
    await account.call('POST', `/v1/sessions/${session.room_name}/end`);
    await visitor.leave().catch(() => undefined);
  }
}, 120_000);
