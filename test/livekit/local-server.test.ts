// The local LiveKit server of the embedded default, for real: the binary the bootstrap
// built, supervised (started, restarted after a crash, stopped), reachable only on loopback.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readdir, readFile, readlink, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  AudioFrame,
  AudioSource,
  LocalAudioTrack,
  Room,
  RoomEvent,
  TrackPublishOptions,
  TrackSource,
} from '@livekit/rtc-node';
import { AccessToken, RoomServiceClient } from 'livekit-server-sdk';
import { processAlive } from '../../src/admin/service-record.ts';
import { LocalLivekitServer, livekitBinary } from '../../src/livekit/index.ts';
import { tempDir } from '../support/processes.ts';
import { eventually } from '../support/visitor.ts';

/** Local addresses ("127.0.0.1:7880") of the TCP listeners and UDP sockets a process holds. */
async function socketsOf(pid: number): Promise<string[]> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const inode = target.match(/^socket:\[(\d+)\]$/)?.[1];
    if (inode) inodes.add(inode);
  }
  const addresses: string[] = [];
  for (const table of ['tcp', 'tcp6', 'udp', 'udp6']) {
    const rows = (await readFile(`/proc/${pid}/net/${table}`, 'utf8')).trim().split('\n').slice(1);
    for (const row of rows) {
      const [, local, , state, , , , , , inode] = row.trim().split(/\s+/);
      if (!local || !inode || !inodes.has(inode)) continue;
      if (table.startsWith('tcp') && state !== '0A') continue; // listeners only
      const [hexIp, hexPort] = local.split(':') as [string, string];
      const ip =
        hexIp.length === 8
          ? (hexIp.match(/../g) ?? [])
              .reverse()
              .map((byte) => parseInt(byte, 16))
              .join('.')
          : `[${hexIp}]`; // IPv6, left in /proc's hex form
      addresses.push(`${ip}:${parseInt(hexPort, 16)}`);
    }
  }
  return addresses;
}

describe('local LiveKit server', () => {
  const dirs: string[] = [];
  const logs: string[] = [];
  let dataDir: string;
  let server: LocalLivekitServer;

  const roomService = () => new RoomServiceClient(server.url.replace(/^ws/, 'http'), server.apiKey, server.apiSecret);

  beforeAll(async () => {
    dataDir = await tempDir(dirs, 'likeness-livekit-');
    server = await LocalLivekitServer.start({
      binary: livekitBinary(),
      dataDir,
      webhookUrl: 'http://127.0.0.1:9/internal/livekit/webhook',
      log: (line) => logs.push(line),
    });
  });
  afterAll(async () => {
    await server?.stop();
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  test('writes a private, loopback-only config and listens on loopback only', async () => {
    expect(server.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    expect(server.apiSecret.length).toBeGreaterThanOrEqual(32);

    for (const file of ['livekit.yaml', 'credentials.json']) {
      expect((await stat(join(dataDir, file))).mode & 0o777).toBe(0o600);
    }
    const config = await readFile(server.configPath, 'utf8');
    expect(config).toContain('bind_addresses: ["127.0.0.1"]');
    expect(config).toContain('node_ip: "127.0.0.1"');
    expect(config).toContain('tcp_port: 0');
    expect(config).toContain(`${JSON.stringify(server.apiKey)}: ${JSON.stringify(server.apiSecret)}`);
    expect(config).toContain('- "http://127.0.0.1:9/internal/livekit/webhook"');
    expect(config).not.toMatch(/redis|turn:/);

    const sockets = await socketsOf(server.pid!);
    expect(sockets).toContain(`127.0.0.1:${new URL(server.url).port}`);
    expect(sockets.filter((address) => !address.startsWith('127.0.0.1:'))).toEqual([]);
  });

  test('creates, lists and deletes a room', async () => {
    const rooms = roomService();
    const created = await rooms.createRoom({ name: 'likeness-test-room', emptyTimeout: 60 });
    expect(created.name).toBe('likeness-test-room');
    expect((await rooms.listRooms()).map((room) => room.name)).toContain('likeness-test-room');
    await rooms.deleteRoom('likeness-test-room');
    expect((await rooms.listRooms()).map((room) => room.name)).not.toContain('likeness-test-room');
  });

  test('a local WebRTC client publishes audio another one receives, over loopback UDP', async () => {
    const token = (identity: string) => {
      const grant = new AccessToken(server.apiKey, server.apiSecret, { identity });
      grant.addGrant({ room: 'likeness-media', roomJoin: true, canPublish: true, canSubscribe: true });
      return grant.toJwt();
    };
    const speaker = new Room();
    const listener = new Room();
    let heard = false;
    listener.on(RoomEvent.TrackSubscribed, () => (heard = true));
    try {
      // Rooms are never created by joining (auto_create is off): create it as a session would.
      await roomService().createRoom({ name: 'likeness-media' });
      await speaker.connect(server.url, await token('speaker'), { autoSubscribe: false, dynacast: false });
      await listener.connect(server.url, await token('listener'), { autoSubscribe: true, dynacast: false });
      const source = new AudioSource(48_000, 1);
      const options = new TrackPublishOptions();
      options.source = TrackSource.SOURCE_MICROPHONE;
      await speaker.localParticipant!.publishTrack(LocalAudioTrack.createAudioTrack('mic', source), options);
      await eventually(
        async () => {
          await source.captureFrame(new AudioFrame(new Int16Array(480), 48_000, 1, 480));
          return heard;
        },
        15_000,
        'the listener to receive the track',
      );

      const media = (await socketsOf(server.pid!)).filter(
        (address) => address !== `127.0.0.1:${new URL(server.url).port}`,
      );
      expect(media.length).toBeGreaterThan(0);
      for (const address of media) expect(address).toMatch(/^127\.0\.0\.1:\d+$/);
    } finally {
      await Promise.all([speaker.disconnect(), listener.disconnect()]);
    }
  }, 30_000);

  test('restarts the server after SIGKILL, at the same address with the same credentials', async () => {
    const killed = server.pid!;
    process.kill(killed, 'SIGKILL');
    await eventually(() => server.restarts === 1, 20_000, 'the restart');
    expect(server.pid).toBeDefined();
    expect(server.pid).not.toBe(killed);
    expect(processAlive(killed)).toBe(false);
    expect(logs.some((line) => line.includes(`pid ${killed}) exited unexpectedly`))).toBe(true);

    const rooms = roomService();
    await rooms.createRoom({ name: 'after-restart' });
    expect((await rooms.listRooms()).map((room) => room.name)).toContain('after-restart');
  }, 30_000);

  test('a second start on the same data folder reuses the credentials', async () => {
    const again = await LocalLivekitServer.start({ binary: livekitBinary(), dataDir, log: (line) => logs.push(line) });
    try {
      expect([again.apiKey, again.apiSecret]).toEqual([server.apiKey, server.apiSecret]);
      expect(again.url).not.toBe(server.url);
      await new RoomServiceClient(again.url.replace(/^ws/, 'http'), server.apiKey, server.apiSecret).listRooms();
    } finally {
      await again.stop();
    }
  });

  test('stop() ends the process and restarts nothing', async () => {
    const pid = server.pid!;
    await server.stop();
    expect(processAlive(pid)).toBe(false);
    const pgrep = Bun.spawnSync(['pgrep', '-f', 'livekit-server'], { stdout: 'pipe' });
    expect(pgrep.stdout.toString().split(/\s+/)).not.toContain(String(pid));
    await Bun.sleep(500);
    expect(server.pid).toBeUndefined();
    expect(server.restarts).toBe(1);
  });
});
