// Whether LiveKit received a job's tracks (agent/avatar/delivery.ts), asked of a real LiveKit
// with a real WebRTC client. LiveKit lists a track once its first packet arrived; libwebrtc
// sends some (bandwidth probes) as soon as the publisher connection is up, frames or not: what
// stays unlisted is a track whose connection never came up, or one LiveKit no longer has.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rm } from 'node:fs/promises';
import { AudioFrame, AudioSource, LocalAudioTrack, Room, TrackPublishOptions, TrackSource } from '@livekit/rtc-node';
import { AccessToken, RoomServiceClient } from 'livekit-server-sdk';
import { tracksReceived } from '../../agent/avatar/index.ts';
import { LocalLivekitServer, livekitBinary } from '../../src/livekit/index.ts';
import { type CameraTrack, publishCameraTrack } from '../support/camera-track.ts';
import { tempDir } from '../support/processes.ts';

const ROOM = 'likeness-delivery';
const WIDTH = 64;
const HEIGHT = 64;

describe('whether LiveKit received the tracks a job published', () => {
  const dirs: string[] = [];
  let server: LocalLivekitServer;
  const rooms: Room[] = [];
  const timers: ReturnType<typeof setInterval>[] = [];

  async function join(identity: string): Promise<Room> {
    const grant = new AccessToken(server.apiKey, server.apiSecret, { identity });
    grant.addGrant({ room: ROOM, roomJoin: true, canPublish: true, canSubscribe: true });
    const room = new Room();
    rooms.push(room);
    // As the job joins: dynacast on (agent/job.ts joinRoom), nobody subscribed yet.
    await room.connect(server.url, await grant.toJwt(), { autoSubscribe: false, dynacast: true });
    return room;
  }

  const publishVideo = (room: Room, name: string) =>
    publishCameraTrack(room, { name, width: WIDTH, height: HEIGHT, simulcast: false });

  /** 25 frames a second of a grey picture, and 20 ms of silence each tick. */
  function stream(video: CameraTrack, audio?: AudioSource): void {
    const pixels = new Uint8Array(WIDTH * HEIGHT * 4).fill(128);
    let index = 0;
    timers.push(
      setInterval(() => {
        video.show(pixels, BigInt(index++ * 40_000));
        void audio?.captureFrame(new AudioFrame(new Int16Array(480), 24_000, 1, 480)).catch(() => undefined);
      }, 40),
    );
  }

  const access = () => ({ url: server.url, apiKey: server.apiKey, apiSecret: server.apiSecret });

  beforeAll(async () => {
    server = await LocalLivekitServer.start({
      binary: livekitBinary(),
      dataDir: await tempDir(dirs, 'likeness-delivery-'),
      webhookUrl: 'http://127.0.0.1:9/internal/livekit/webhook',
      log: () => {},
    });
    await new RoomServiceClient(server.url.replace(/^ws/, 'http'), server.apiKey, server.apiSecret).createRoom({
      name: ROOM,
    });
  });
  afterAll(async () => {
    for (const timer of timers) clearInterval(timer);
    await Promise.all(rooms.map((room) => room.disconnect().catch(() => undefined)));
    await server?.stop();
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  test('tracks whose frames flow are received, with nobody subscribed; one LiveKit does not hold is missing', async () => {
    const room = await join('agent-flowing');
    const video = await publishVideo(room, 'avatar-video');
    const audio = new AudioSource(24_000, 1);
    const voice = await room.localParticipant!.publishTrack(
      LocalAudioTrack.createAudioTrack('avatar-audio', audio),
      new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE }),
    );
    stream(video, audio);
    const started = performance.now();
    const received = await tracksReceived({
      access: access(),
      roomName: ROOM,
      identity: 'agent-flowing',
      trackSids: [video.sid, voice.sid!],
    });
    expect(received).toEqual({ state: 'received' });
    // Well inside the job's allowance: the allowance is for a busy machine, not the normal case.
    expect(performance.now() - started).toBeLessThan(5_000);

    // Frames or not, a track on a connection that is up arrives (libwebrtc's probes).
    const idle = await join('agent-idle');
    const noFrames = await publishVideo(idle, 'avatar-video');
    expect(
      await tracksReceived({ access: access(), roomName: ROOM, identity: 'agent-idle', trackSids: [noFrames.sid] }),
    ).toEqual({ state: 'received' });
    // A track LiveKit does not hold (here: taken back) is missing once the allowance is over.
    await idle.localParticipant!.unpublishTrack(noFrames.sid);
    const extra = await publishVideo(idle, 'avatar-video-2');
    const lookedAt = performance.now();
    const answer = await tracksReceived({
      access: access(),
      roomName: ROOM,
      identity: 'agent-idle',
      trackSids: [extra.sid, noFrames.sid],
      withinMs: 2_000,
    });
    expect(answer).toEqual({ state: 'missing', missing: [noFrames.sid] });
    expect(performance.now() - lookedAt).toBeGreaterThanOrEqual(2_000);
    // The first participant's tracks are its own: a missing track elsewhere does not count.
    expect(
      await tracksReceived({ access: access(), roomName: ROOM, identity: 'agent-flowing', trackSids: [video.sid] }),
    ).toEqual({ state: 'received' });
  }, 30_000);

  test('only a definite answer: LiveKit refusing the credentials, a participant not in the room, or a job that left is unknown', async () => {
    const room = await join('agent-unknown');
    const { sid } = await publishVideo(room, 'avatar-video');
    await room.localParticipant!.unpublishTrack(sid);
    const check = { roomName: ROOM, identity: 'agent-unknown', trackSids: [sid], withinMs: 1_000 };
    expect(await tracksReceived({ ...check, access: { ...access(), apiSecret: 'not-the-secret' } })).toEqual({
      state: 'unknown',
    });
    expect(await tracksReceived({ ...check, access: access(), identity: 'nobody-here' })).toEqual({
      state: 'unknown',
    });
    expect(await tracksReceived({ ...check, access: { url: server.url } })).toEqual({ state: 'unknown' });
    const left = new AbortController();
    setTimeout(() => left.abort(), 300);
    const started = performance.now();
    expect(await tracksReceived({ ...check, access: access(), withinMs: 10_000, signal: left.signal })).toEqual({
      state: 'unknown',
    });
    // Stopped looking as the job left, not at the deadline.
    expect(performance.now() - started).toBeLessThan(3_000);
    // And the same check with the right credentials, still there, is definite.
    expect(await tracksReceived({ ...check, access: access() })).toEqual({ state: 'missing', missing: [sid] });
  }, 30_000);
});
