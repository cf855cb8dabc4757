// A fixture's face as the renderer meets it in a session: training's outputs (framing
// PNG, rig JSON, texture PNGs, for both shapes) served over HTTP, and renderers built on
// them through the same options the agent job passes.
import sharp from 'sharp';
import { type TalkingHeadOptions, TalkingHeadRenderer } from '../../../agent/pipelines/builtin/index.ts';
import type { FaceRig } from '../../../src/contract/face-rig.ts';
import { buildFaceRig, type FaceRigInput } from '../../../src/pipelines/builtin/face-rig.ts';
import { recordingLogger } from '../../support/agent-log.ts';
import { FRAME_SIZES, faceFraming, type Photo, type Shape } from './face.ts';

export interface ServedFace {
  framings: Record<Shape, FaceRigInput>;
  rigs: Record<Shape, FaceRig>;
  /** `identity.assets`: asset name → URL. */
  assets: Record<string, string>;
  stop(): Promise<void>;
}

export async function serveFace(photo: Photo): Promise<ServedFace> {
  const files = new Map<string, { bytes: Uint8Array<ArrayBuffer>; type: string }>();
  const framings = {} as Record<Shape, FaceRigInput>;
  const rigs = {} as Record<Shape, FaceRig>;
  for (const shape of ['portrait', 'landscape'] as const) {
    const framing = await faceFraming(photo, shape);
    const { rig, textures } = buildFaceRig(framing);
    framings[shape] = framing;
    rigs[shape] = rig;
    files.set(`${shape}.image`, { bytes: await png(framing), type: 'image/png' });
    files.set(`${shape}.rig`, {
      bytes: new TextEncoder().encode(JSON.stringify(rig)) as Uint8Array<ArrayBuffer>,
      type: 'application/json',
    });
    for (const [name, texture] of Object.entries(textures))
      files.set(`${shape}.texture.${name}`, { bytes: await png(texture), type: 'image/png' });
  }
  const { assets, stop } = serveFiles(files);
  return { framings, rigs, assets, stop };
}

/** Files by name on a loopback server, as the asset store serves a face's: their URLs by name. */
export function serveFiles(files: Map<string, { bytes: Uint8Array<ArrayBuffer>; type: string }>): {
  assets: Record<string, string>;
  stop: () => Promise<void>;
} {
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(request) {
      const file = files.get(new URL(request.url).pathname.slice(1));
      return file
        ? new Response(file.bytes, { headers: { 'content-type': file.type } })
        : new Response('not found', { status: 404 });
    },
  });
  const assets = Object.fromEntries([...files.keys()].map((name) => [name, `http://127.0.0.1:${server.port}/${name}`]));
  return { assets, stop: () => server.stop(true) };
}

/** A renderer for the served face; `assets` overrides what the identity carries. */
export function talkingHead(
  face: ServedFace,
  shape: Shape,
  options: Partial<TalkingHeadOptions> & { assets?: Record<string, string> } = {},
): TalkingHeadRenderer {
  const { assets = face.assets, ...rest } = options;
  return new TalkingHeadRenderer({
    identity: {
      identity_id: 'idt_fixture',
      name: 'Fixture',
      prompt: 'You are a test.',
      language: 'en',
      image_url: assets[`${shape}.image`] ?? 'http://127.0.0.1:9/none',
      audio_url: null,
      assets,
    },
    size: FRAME_SIZES[shape],
    random: seededRandom(7),
    ...rest,
    logger: rest.logger ?? recordingLogger(),
  });
}

/** mulberry32: the same blinks and sways on every run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function png(image: { width: number; height: number; rgba: Uint8Array }): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(
    await sharp(image.rgba, { raw: { width: image.width, height: image.height, channels: 4 } })
      .png()
      .toBuffer(),
  );
}
