// A minimal self-hosted avatar service (docs/renderers.md): an HTTP API that, asked to start
// a session, joins the room with the token it was given (a real rtc-node participant) and
// speaks the agents' avatar protocol: it takes the agent's speech from `lk.audio_stream`
// byte streams, plays it on its own audio track in real time beside a video track (both
// published on the agent's behalf), answers `lk.clear_buffer`, and reports each segment
// with `lk.playback_finished`. Its "renderer" is a placeholder: the identity's photo with a
// bar that follows the voice's loudness; a GPU renderer would draw its frames where
// `drawFrame` is. It keeps what it received, for tests and for looking at.
//   bun examples/avatar-service/service.ts [--port 9000]
// then point the pipeline at it: AVATAR_SERVICE_URL=http://<host>:9000 (agent-pipeline.ts).

import { parseArgs } from 'node:util';
import {
  AudioFrame,
  AudioSource,
  type ByteStreamReader,
  LocalAudioTrack,
  LocalVideoTrack,
  Room,
  TrackPublishOptions,
  TrackSource,
  VideoBufferType,
  VideoFrame,
  VideoSource,
} from '@livekit/rtc-node';
import sharp from 'sharp';
import type { AvatarServiceRequest } from '../../agent/pipelines/index.ts';

const WIDTH = 320;
const HEIGHT = 240;

export interface ReceivedSegment {
  streamId: string;
  attributes: Record<string, string>;
  from: string;
  samples: Int16Array[];
  /** The agent closed the stream (flushed the segment). */
  ended: boolean;
  played: number;
  finished?: { interrupted: boolean; playbackPosition: number };
}

export interface ServiceSession {
  id: string;
  request: AvatarServiceRequest;
  room: Room;
  segments: ReceivedSegment[];
  clears: { at: number; from: string }[];
  closed: boolean;
}

export interface AvatarService {
  url: string;
  sessions: ServiceSession[];
  stop(): Promise<void>;
}

export function startAvatarService({
  port = 0,
  hostname = '127.0.0.1',
}: {
  port?: number;
  hostname?: string;
} = {}): AvatarService {
  const sessions: ServiceSession[] = [];
  const running = new Map<string, () => Promise<void>>();

  async function join(request: AvatarServiceRequest): Promise<ServiceSession> {
    const session = await joinAsAvatar(request);
    sessions.push(session);
    running.set(session.id, session.close);
    return session;
  }

  const server = Bun.serve({
    port,
    hostname,
    routes: {
      '/sessions': {
        POST: async (request) => {
          const session = await join((await request.json()) as AvatarServiceRequest);
          return Response.json({ session_id: session.id });
        },
      },
      '/sessions/:id': {
        DELETE: async (request) => {
          await running.get(request.params.id)?.();
          running.delete(request.params.id);
          return new Response(null, { status: 204 });
        },
      },
    },
    fetch: () => new Response('not found', { status: 404 }),
  });

  return {
    url: `http://${hostname}:${server.port}`,
    sessions,
    async stop() {
      for (const close of running.values()) await close();
      running.clear();
      await server.stop(true);
    },
  };
}

/** The identity's photo at the frame size (RGBA), or nothing. */
async function loadPhoto(url: string | undefined): Promise<Uint8Array | undefined> {
  if (!url) return undefined;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    if (!response.ok) return undefined;
    const bytes = new Uint8Array(await response.arrayBuffer());
    return new Uint8Array(await sharp(bytes).resize(WIDTH, HEIGHT, { fit: 'cover' }).ensureAlpha().raw().toBuffer());
  } catch {
    return undefined;
  }
}

/** Where a real renderer draws: here the photo (or a grey that changes), and a bar as loud as the voice. */
function drawFrame(pixels: Uint8Array, photo: Uint8Array | undefined, loudness: number, ticks: number): void {
  if (photo) pixels.set(photo);
  else pixels.fill(ticks % 200);
  const bar = Math.min(WIDTH, Math.round((loudness / 8000) * WIDTH));
  for (let y = HEIGHT - 8; y < HEIGHT; y++) {
    for (let x = 0; x < WIDTH; x++) {
      const i = (y * WIDTH + x) * 4;
      const on = x < bar;
      pixels[i] = on ? 80 : 20;
      pixels[i + 1] = on ? 220 : 20;
      pixels[i + 2] = on ? 120 : 20;
      pixels[i + 3] = 255;
    }
  }
}

function rms(samples: Int16Array): number {
  let sum = 0;
  for (const s of samples) sum += s * s;
  return Math.sqrt(sum / samples.length);
}

/** Joins the session's room as its avatar and speaks the protocol until `close()`. */
export async function joinAsAvatar(
  request: AvatarServiceRequest,
): Promise<ServiceSession & { close(): Promise<void> }> {
  const RATE = request.sampleRate;
  const TICK_SAMPLES = RATE / 100; // 10 ms
  const room = new Room();
  await room.connect(request.livekitUrl, request.token, { autoSubscribe: false, dynacast: false });
  const session: ServiceSession = { id: crypto.randomUUID(), request, room, segments: [], clears: [], closed: false };

  const audio = new AudioSource(RATE, 1, 100);
  const video = new VideoSource(WIDTH, HEIGHT);
  const participant = room.localParticipant!;
  await participant.publishTrack(
    LocalVideoTrack.createVideoTrack('service_video', video),
    new TrackPublishOptions({ source: TrackSource.SOURCE_CAMERA }),
  );
  await participant.publishTrack(
    LocalAudioTrack.createAudioTrack('service_audio', audio),
    new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE }),
  );

  const finish = (segment: ReceivedSegment, interrupted: boolean) => {
    if (segment.finished) return;
    segment.finished = { interrupted, playbackPosition: segment.played / RATE };
    void participant
      .performRpc({
        destinationIdentity: request.agentParticipantIdentity,
        method: 'lk.playback_finished',
        payload: JSON.stringify({ playback_position: segment.played / RATE, interrupted }),
      })
      .catch(() => undefined);
  };

  room.registerByteStreamHandler('lk.audio_stream', (reader: ByteStreamReader, from) => {
    const segment: ReceivedSegment = {
      streamId: reader.info.streamId,
      attributes: reader.info.attributes ?? {},
      from: from.identity,
      samples: [],
      ended: false,
      played: 0,
    };
    session.segments.push(segment);
    void (async () => {
      let odd: number | undefined;
      for await (const chunk of reader) {
        if (segment.finished) continue; // cleared: the rest of it is dropped
        let bytes = chunk;
        if (odd !== undefined) bytes = Uint8Array.of(odd, ...chunk);
        odd = bytes.length % 2 ? bytes[bytes.length - 1] : undefined;
        const even = bytes.subarray(0, bytes.length - (bytes.length % 2));
        segment.samples.push(new Int16Array(even.slice().buffer));
      }
      segment.ended = true;
    })();
  });

  participant.registerRpcMethod('lk.clear_buffer', async (data) => {
    session.clears.push({ at: performance.now(), from: data.callerIdentity });
    for (const segment of session.segments) finish(segment, true);
    audio.clearQueue();
    return 'ok';
  });

  // The service's clock: 10 ms of the oldest unfinished segment's speech (or silence) per
  // tick, and a frame every 40 ms; a segment fully played after its stream ended is finished.
  const photo = await loadPhoto(request.identity?.image_url);
  const pixels = new Uint8Array(WIDTH * HEIGHT * 4);
  let loudness = 0;
  let ticks = 0;
  const startedAt = performance.now();
  const timer = setInterval(() => {
    while (ticks * 10 <= performance.now() - startedAt) {
      const out = new Int16Array(TICK_SAMPLES);
      const segment = session.segments.find((s) => !s.finished);
      if (segment) {
        let filled = 0;
        while (filled < TICK_SAMPLES && segment.samples.length > 0) {
          const head = segment.samples[0]!;
          const n = Math.min(TICK_SAMPLES - filled, head.length);
          out.set(head.subarray(0, n), filled);
          filled += n;
          segment.played += n;
          if (n === head.length) segment.samples.shift();
          else segment.samples[0] = head.subarray(n);
        }
        if (segment.ended && segment.samples.length === 0) finish(segment, false);
      }
      void audio.captureFrame(new AudioFrame(out, RATE, 1, TICK_SAMPLES)).catch(() => undefined);
      loudness = Math.max(loudness * 0.8, rms(out));
      if (ticks % 4 === 0) {
        drawFrame(pixels, photo, loudness, ticks);
        video.captureFrame(new VideoFrame(pixels, WIDTH, HEIGHT, VideoBufferType.RGBA));
      }
      ticks++;
    }
  }, 5);

  const close = async () => {
    clearInterval(timer);
    session.closed = true;
    await room.disconnect().catch(() => undefined);
    await audio.close();
    await video.close();
  };
  return Object.assign(session, { close });
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: { port: { type: 'string', default: '9000' }, host: { type: 'string', default: '0.0.0.0' } },
  });
  const service = startAvatarService({ port: Number(values.port), hostname: values.host });
  console.log(`avatar service listening on ${service.url}`);
}
