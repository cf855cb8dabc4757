// The avatar runner (agent/avatar/runner.ts) draws the face only once someone watches it: until
// a participant subscribes to the video, the last frame is handed to the track again at 5 fps
// and nothing is drawn (an audio-only visitor, a room waiting for its visitor); from the first
// subscription every tick draws. A recorded session draws every tick regardless. Driven with a
// counting renderer on a real LiveKit, the job's side connected with dynacast as agent/job.ts
// connects, the watcher a real WebRTC client.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rm } from 'node:fs/promises';
import { initializeLogger } from '@livekit/agents';
import { Room, RoomEvent, TrackKind, VideoBufferType, VideoFrame, VideoStream } from '@livekit/rtc-node';
import { AccessToken, RoomServiceClient } from 'livekit-server-sdk';
import { AvatarRunner } from '../../agent/avatar/runner.ts';
import { AvatarSpeech } from '../../agent/avatar/speech.ts';
import type { AvatarRenderer } from '../../agent/pipelines/index.ts';
import { AVATAR_FPS } from '../../src/contract/index.ts';
import { LocalLivekitServer, livekitBinary } from '../../src/livekit/index.ts';
import { tempDir } from '../support/processes.ts';
import { eventually } from '../support/visitor.ts';

const WIDTH = 64;
const HEIGHT = 64;

/** A grey face that counts how often it was drawn. */
function countingRenderer(): AvatarRenderer & { draws: number } {
  const frame = new VideoFrame(new Uint8Array(WIDTH * HEIGHT * 4).fill(128), WIDTH, HEIGHT, VideoBufferType.RGBA);
  return {
    size: { width: WIDTH, height: HEIGHT },
    draws: 0,
    prepare: async () => {},
    nextFrame() {
      this.draws++;
      return frame;
    },
  };
}

describe('a face nobody watches', () => {
  const dirs: string[] = [];
  const rooms: Room[] = [];
  const runners: AvatarRunner[] = [];
  let server: LocalLivekitServer;

  async function join(roomName: string, identity: string, watcher: boolean): Promise<Room> {
    const grant = new AccessToken(server.apiKey, server.apiSecret, { identity });
    grant.addGrant({ room: roomName, roomJoin: true, canPublish: true, canSubscribe: true });
    const room = new Room();
    rooms.push(room);
    await room.connect(server.url, await grant.toJwt(), { autoSubscribe: watcher, dynacast: !watcher });
    return room;
  }

  async function startRunner(roomName: string, recorded: boolean) {
    await new RoomServiceClient(server.url.replace(/^ws/, 'http'), server.apiKey, server.apiSecret).createRoom({
      name: roomName,
    });
    const room = await join(roomName, 'agent', false);
    const renderer = countingRenderer();
    const recordedFrames: (VideoFrame | null)[] = [];
    const runner = new AvatarRunner({
      room,
      renderer,
      rendererReady: Promise.resolve(),
      speech: new AvatarSpeech(),
      onFirstFrame: () => {},
      logger: { warn: () => {} },
      ...(recorded ? { recorder: { onTick: (frame) => void recordedFrames.push(frame) } } : {}),
    });
    runners.push(runner);
    await runner.start();
    return { runner, renderer, recordedFrames };
  }

  beforeAll(async () => {
    // The speech is agents' audio output, which logs through agents' logger.
    initializeLogger({ pretty: false, level: 'warn' });
    server = await LocalLivekitServer.start({
      binary: livekitBinary(),
      dataDir: await tempDir(dirs, 'likeness-unwatched-'),
      webhookUrl: 'http://127.0.0.1:9/internal/livekit/webhook',
      log: () => {},
    });
  }, 60_000);

  afterAll(async () => {
    for (const runner of runners) await runner.stop();
    for (const room of rooms) await room.disconnect().catch(() => undefined);
    await server?.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  test('is drawn once, not every tick; a visitor who subscribes gets frames and every tick draws from then on', async () => {
    const { runner, renderer } = await startRunner('likeness-unwatched', false);
    await Bun.sleep(1_000);
    // The first frame only (the picture the encoder keeps), and no watched time or frame to report.
    expect(renderer.draws).toBe(1);
    expect(runner.videoTally).toEqual({ frames: 0, watchedMs: 0 });

    const visitor = await join('likeness-unwatched', 'visitor', true);
    const frames: number[] = [];
    visitor.on(RoomEvent.TrackSubscribed, (track) => {
      if (track.kind !== TrackKind.KIND_VIDEO) return;
      void (async () => {
        for await (const _ of new VideoStream(track)) frames.push(performance.now());
      })();
    });
    await eventually(() => frames.length > 0, 10_000, 'a frame at the visitor');
    const drawsAtFirstFrame = renderer.draws;
    await Bun.sleep(2_000);
    const drawn = renderer.draws - drawsAtFirstFrame;
    console.log(`unwatched face: drew ${drawn} frames in the 2 s after the visitor's first frame`);
    // 50 ticks in 2 s; a loaded machine skips some after a stall.
    expect(drawn).toBeGreaterThan(2 * AVATAR_FPS * 0.6);
    const tally = runner.videoTally;
    expect(tally.frames).toBe(renderer.draws - 1);
    expect(tally.watchedMs).toBeGreaterThan(2_000);
    expect(frames.length).toBeGreaterThan(2 * AVATAR_FPS * 0.5);
  }, 60_000);

  test('a recorded face is drawn every tick, watched or not, and the recording gets each frame', async () => {
    const { renderer, recordedFrames } = await startRunner('likeness-unwatched-recorded', true);
    await Bun.sleep(1_000);
    expect(renderer.draws).toBeGreaterThan(AVATAR_FPS * 0.6);
    expect(recordedFrames.length).toBe(renderer.draws);
    expect(recordedFrames.every((frame) => frame !== null)).toBe(true);
  }, 60_000);
});
