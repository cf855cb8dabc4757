// rtc-node as patched (R1 in agent/agents-adapter/index.ts): the FFI keeps its log records in
// Rust. Unpatched, a room that fails to connect sends ~240 batches of trace records to
// JavaScript in a second and a half, each decoded and handed to every listener; nothing reads
// them. A room whose server is not there is enough to make the FFI log: no LiveKit needed.
import { expect, test } from 'bun:test';
import { AudioFrame, AudioSource, Room } from '@livekit/rtc-node';

/** rtc-node's FfiClient, a process-wide singleton it keeps on globalThis (not exported). */
type FfiEvents = { on(event: 'ffi_event', listener: (event: { message: { case?: string } }) => void): void };

test('the FFI sends no log records to JavaScript, while a room fails to connect and audio is captured', async () => {
  const source = new AudioSource(48_000, 1); // starts the FFI, if nothing in this process has
  const ffi = (globalThis as unknown as { _ffiClientInstance: FfiEvents })._ffiClientInstance;
  const cases = new Map<string, number>();
  ffi.on('ffi_event', (event) => {
    const name = event.message.case ?? 'none';
    cases.set(name, (cases.get(name) ?? 0) + 1);
  });
  await source.captureFrame(new AudioFrame(new Int16Array(480), 48_000, 1, 480));
  const room = new Room();
  const connecting = room.connect('ws://127.0.0.1:9', 'not-a-token').then(
    () => 'connected',
    () => 'refused',
  );
  expect(await connecting).toBe('refused');
  await Bun.sleep(1_500); // what the FFI logs of the failure arrives batched, once a second
  await source.close();
  // The events the test caused did arrive (the listener works), and no batch of logs came.
  expect(cases.get('captureAudioFrame')).toBe(1);
  expect(cases.get('logs') ?? 0).toBe(0);
});
