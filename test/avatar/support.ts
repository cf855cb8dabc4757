// What the avatar suites share: the astronaut identity, sessions joined by a real visitor,
// the frames that visitor receives (with the mouth region measured), and where the mouth is
// (from the identity's own rig, as training stored it).
import { expect } from 'bun:test';
import { join } from 'node:path';
import { type RemoteTrack, TrackKind, VideoBufferType, VideoStream } from '@livekit/rtc-node';
import { eq } from 'drizzle-orm';
import { type FaceRig, toImage } from '../../src/contract/face-rig.ts';
import { identities } from '../../src/identities/schema.ts';
import { file, type IdentityBody, identityForm } from '../support/forms.ts';
import { startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { postSessionStart } from '../support/session-start.ts';
import { joinAsVisitor, type StartedSession, type Visitor } from '../support/visitor.ts';

export async function astronautPhoto(): Promise<File> {
  return file(
    new Uint8Array(await Bun.file(join(import.meta.dir, '../fixtures/astronaut.png')).arrayBuffer()),
    'astronaut.png',
    'image/png',
  );
}

/** An identity trained from NASA's astronaut portrait (a real face). */
export async function createAstronaut(
  account: TestAccount,
  fields: Record<string, string> = {},
): Promise<IdentityBody> {
  const response = await account.call('POST', '/v1/identities', {
    body: await identityForm({ image: await astronautPhoto(), language: 'en', ...fields }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as IdentityBody;
}

/** The training the identity's row holds (its `assets` are asset keys). */
export async function storedTraining(
  service: TestService,
  identityId: string,
): Promise<{ version?: number; assets?: Record<string, string> }> {
  const [row] = await service.services.database.db
    .select({ training: identities.training })
    .from(identities)
    .where(eq(identities.id, identityId));
  return (row?.training ?? {}) as { version?: number; assets?: Record<string, string> };
}

export async function startSession(account: TestAccount, body: Record<string, unknown>): Promise<StartedSession> {
  const response = await postSessionStart(account, body);
  expect(response.status).toBe(200);
  return (await response.json()) as StartedSession;
}

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * The region the lips and the opening mouth occupy in the frame: between the mouth corners,
 * from above the lips' parting line to below it by the rig's full opening.
 */
export function mouthBox(rig: FaceRig): Box {
  const { mouth } = rig;
  const vs = mouth.split.map(([, v]) => v);
  const top = Math.min(...vs) - 0.3 * mouth.maxOpen;
  const bottom = Math.max(...vs) + 1.2 * mouth.maxOpen;
  const corners = [
    toImage(mouth, [mouth.corners[0], top]),
    toImage(mouth, [mouth.corners[1], top]),
    toImage(mouth, [mouth.corners[0], bottom]),
    toImage(mouth, [mouth.corners[1], bottom]),
  ];
  const x0 = Math.max(0, Math.floor(Math.min(...corners.map(([x]) => x))));
  const y0 = Math.max(0, Math.floor(Math.min(...corners.map(([, y]) => y))));
  const x1 = Math.min(rig.width, Math.ceil(Math.max(...corners.map(([x]) => x))));
  const y1 = Math.min(rig.height, Math.ceil(Math.max(...corners.map(([, y]) => y))));
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

export interface ReceivedFrame {
  /** performance.now() on arrival at the visitor. */
  at: number;
  width: number;
  height: number;
  /** The luma of `mouthBox` (row by row), when a box was given and the frame has the full size. */
  mouth?: Uint8Array;
}

/** Every frame of a remote video track as the visitor receives it, until closed. */
export class FrameLog {
  readonly frames: ReceivedFrame[] = [];
  readonly #reader: ReadableStreamDefaultReader<{ frame: import('@livekit/rtc-node').VideoFrame }>;
  readonly #box: Box | undefined;
  readonly #size: { width: number; height: number } | undefined;

  constructor(track: RemoteTrack, mouth?: { box: Box; width: number; height: number }) {
    this.#reader = new VideoStream(track).getReader();
    this.#box = mouth?.box;
    this.#size = mouth && { width: mouth.width, height: mouth.height };
    void this.#read();
  }

  async #read(): Promise<void> {
    for (;;) {
      const { done, value } = await this.#reader.read().catch(() => ({ done: true, value: undefined }));
      if (done || !value) return;
      const at = performance.now();
      const { frame } = value;
      const received: ReceivedFrame = { at, width: frame.width, height: frame.height };
      const box = this.#box;
      if (box && this.#size && frame.width === this.#size.width && frame.height === this.#size.height) {
        // The Y plane leads an I420 buffer: row r of the picture starts at r × width.
        const i420 = frame.type === VideoBufferType.I420 ? frame : frame.convert(VideoBufferType.I420);
        const luma = new Uint8Array(box.width * box.height);
        for (let row = 0; row < box.height; row++) {
          const start = (box.y + row) * frame.width + box.x;
          luma.set(i420.data.subarray(start, start + box.width), row * box.width);
        }
        received.mouth = luma;
      }
      this.frames.push(received);
    }
  }

  /** Frames that arrived in [from, to). */
  between(from: number, to: number): ReceivedFrame[] {
    return this.frames.filter((f) => f.at >= from && f.at < to);
  }

  close(): void {
    void this.#reader.cancel().catch(() => undefined);
  }
}

/** Mean absolute luma difference between two mouth crops. */
/**
 * How much the mouth's box differs between two frames (mean absolute luma difference), after
 * lining them up: the smallest difference over shifts of up to `SHIFT` px each way, so that the
 * head's sway and nods, which move the whole box, do not count as the mouth moving.
 */
export function mouthChange(a: Uint8Array, b: Uint8Array, box: { width: number; height: number }): number {
  const { width, height } = box;
  let best = Infinity;
  for (let dy = -SHIFT; dy <= SHIFT; dy++) {
    for (let dx = -SHIFT; dx <= SHIFT; dx++) {
      let sum = 0;
      let n = 0;
      for (let y = SHIFT; y < height - SHIFT; y++) {
        const row = y * width;
        const shifted = (y + dy) * width + dx;
        for (let x = SHIFT; x < width - SHIFT; x++) {
          sum += Math.abs(a[row + x]! - b[shifted + x]!);
          n++;
        }
      }
      best = Math.min(best, sum / Math.max(1, n));
    }
  }
  return best;
}
const SHIFT = 4;

/** A visitor in `session` with a FrameLog of each video track as it is subscribed (the avatar's is the first). */
export async function joinWatchingVideo(
  session: StartedSession,
  options: { audioOnly?: boolean } = {},
): Promise<{ visitor: Visitor; videos: FrameLog[] }> {
  const videos: FrameLog[] = [];
  const visitor = await joinAsVisitor(session, {
    ...options,
    onTrack: (track: RemoteTrack) => void (track.kind === TrackKind.KIND_VIDEO && videos.push(new FrameLog(track))),
  });
  return { visitor, videos };
}

/**
 * A second control plane on the LiveKit server of `beside` (and so on its agent workers), with
 * landscape video switched off, and an account there; `env` adds to its settings.
 */
export async function startPortraitOnly(
  beside: TestService,
  env: Record<string, string> = {},
): Promise<{ service: TestService; account: TestAccount }> {
  const { url, apiKey, apiSecret } = beside.services.livekit;
  const service = await startTestService('pglite', {
    livekit: 'local',
    env: {
      ...env,
      CREDITS_ONBOARDING: '0',
      AVATAR_LANDSCAPE: 'false',
      LIVEKIT_URL: url,
      LIVEKIT_API_KEY: apiKey,
      LIVEKIT_API_SECRET: apiSecret,
    },
  });
  return { service, account: await service.account({ credits: 10_000 }) };
}
