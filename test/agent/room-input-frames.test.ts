// agents' room input as patched (P9 in agent/agents-adapter/index.ts): the visitor's voice
// reaches the session in 20 ms frames, as a browser sends it. Unpatched, rtc-node's default
// hands JavaScript 10 ms frames: twice the events, each decoded and passed through the VAD,
// the STT and the session's streams (bench/renderer: a listening job's main thread 7.0 → 4.6–5.3 %
// of a core).
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { rm } from 'node:fs/promises';
import { dirname, join as joinPath } from 'node:path';
import { initializeLogger } from '@livekit/agents';
import { type AudioFrame, Room } from '@livekit/rtc-node';
import { AccessToken, RoomServiceClient } from 'livekit-server-sdk';
import { httpUrlOf } from '../../src/livekit/connection.ts';
import { LocalLivekitServer, livekitBinary } from '../../src/livekit/index.ts';
import { tempDir } from '../support/processes.ts';
import { Microphone } from '../support/voice.ts';

/** The class agents' RoomIO reads the visitor's microphone with (not exported by the package). */
interface AudioInputStream {
  setParticipant(identity: string): void;
  readonly stream: ReadableStream<AudioFrame>;
  close(): Promise<void>;
}
const { ParticipantAudioInputStream } = (await import(
  joinPath(dirname(Bun.resolveSync('@livekit/agents', import.meta.dir)), 'voice/room_io/_input.js')
)) as {
  ParticipantAudioInputStream: new (options: {
    room: Room;
    sampleRate: number;
    numChannels: number;
  }) => AudioInputStream;
};

const dirs: string[] = [];
let livekit: LocalLivekitServer;
const rooms: Room[] = [];

beforeAll(async () => {
  initializeLogger({ pretty: false, level: 'warn' });
  livekit = await LocalLivekitServer.start({
    binary: livekitBinary(),
    dataDir: await tempDir(dirs, 'likeness-room-input-'),
    log: () => {},
  });
  // This LiveKit makes no room on a join (as the service runs it): the room is made first.
  await new RoomServiceClient(httpUrlOf(livekit.url), livekit.apiKey, livekit.apiSecret).createRoom({
    name: 'room-input',
  });
}, 60_000);

afterAll(async () => {
  for (const room of rooms) await room.disconnect().catch(() => undefined);
  await livekit?.stop();
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
}, 60_000);

async function join(identity: string): Promise<Room> {
  const token = new AccessToken(livekit.apiKey, livekit.apiSecret, { identity });
  token.addGrant({ roomJoin: true, room: 'room-input' });
  const room = new Room();
  await room.connect(livekit.url, await token.toJwt(), { autoSubscribe: true, dynacast: false });
  rooms.push(room);
  return room;
}

test("the session's room input reads the visitor's microphone in 20 ms frames", async () => {
  const agent = await join('agent');
  const input = new ParticipantAudioInputStream({ room: agent, sampleRate: 24_000, numChannels: 1 });
  const visitor = await join('visitor');
  // 10 ms frames from the visitor: what the session reads is rtc-node's framing, not theirs.
  const microphone = await Microphone.publish(visitor);
  input.setParticipant('visitor');
  const reader = input.stream.getReader();
  const frames: AudioFrame[] = [];
  const deadline = Date.now() + 20_000;
  while (frames.length < 10 && Date.now() < deadline) {
    const { value } = await reader.read();
    if (value) frames.push(value);
  }
  reader.releaseLock();
  await microphone.stop();
  await input.close();
  expect(frames.length).toBe(10);
  expect(frames.map((frame) => (frame.samplesPerChannel / frame.sampleRate) * 1000)).toEqual(Array(10).fill(20));
}, 60_000);
