// The built-in CPU pipeline. Training finds the face (face-detection.ts), frames the photo
// for each avatar shape (framing.ts) and builds the renderer's face rig on each framing, so
// that a session only downloads and warps: no face analysis at session start.
import sharp from 'sharp';
import { buildFaceRig } from '../../../agent/renderers/builtin/rig.ts';
import type { AvatarShape } from '../../../agent/renderers/renderer.ts';
import type { AssetStore } from '../../assets/index.ts';
import { renderImageVariants } from '../../identities/media/index.ts';
import type { Pipeline } from '../index.ts';
import { findFace, type Box } from './face-detection.ts';
import { frameFace, opaqueRgba, type Framing } from './framing.ts';

export const TRAINING_VERSION = 2;
export const SHAPES: readonly AvatarShape[] = ['portrait', 'landscape'];

/** What the identity row's `training` holds for this pipeline (the renderer reads `assets`). */
export interface BuiltinTraining {
  pipeline: 'builtin';
  version: typeof TRAINING_VERSION;
  /** The face trained from, in the uploaded photo's (upright) pixels. */
  face: { box: Box; score: number; faces: number };
  /**
   * Asset keys by name: `<shape>.image` (the framing, PNG), `<shape>.rig` (JSON) and
   * `<shape>.texture.<name>` (PNG), for shape `portrait` and `landscape`.
   */
  assets: Record<string, string>;
}

export const builtinPipeline: Pipeline = {
  id: 'builtin',
  description: 'Built-in CPU talking head: animates the uploaded photo itself.',
  async checkImage(image) {
    await findFace(image);
  },
  async train({ image, store, prefix }) {
    // Detection (wasm, this thread) overlaps the photo's encoding (sharp's threads); nothing
    // is stored before a face is found.
    const finding = findFace(image);
    const [shapes, { normalized, render }] = await allSettled([
      allSettled(SHAPES.map((shape) => finding.then((face) => frameFace(image, face, shape)).then((framing) => storeShape(store, prefix, framing)))),
      renderImageVariants(image),
    ]);
    const face = await finding;
    const imageKey = `${prefix}image.${normalized.ext}`;
    const renderKey = `${prefix}render.png`;
    await allSettled([store.put(imageKey, normalized.bytes, normalized.contentType), store.put(renderKey, render.bytes, 'image/png')]);
    const training: BuiltinTraining = {
      pipeline: 'builtin',
      version: TRAINING_VERSION,
      face: { box: face.box, score: face.score, faces: face.faces },
      assets: Object.assign({}, ...shapes),
    };
    return {
      image: {
        key: imageKey,
        contentType: normalized.contentType,
        width: normalized.width,
        height: normalized.height,
        variants: { render: { key: renderKey, width: render.width, height: render.height } },
      },
      training: { ...training },
    };
  },
};

/** One shape's framing, rig and textures, stored under the training's prefix; their keys by asset name. */
async function storeShape(store: AssetStore, prefix: string, framing: Framing): Promise<Record<string, string>> {
  const { shape, width, height } = framing;
  const { rig, textures } = buildFaceRig({ width, height, rgba: opaqueRgba(framing.rgb), landmarks: framing.landmarks });
  const files: Array<{ name: string; key: string; bytes: Promise<Uint8Array>; type: string }> = [
    { name: `${shape}.image`, key: `${prefix}${shape}.png`, bytes: png(framing.rgb, width, height, 3), type: 'image/png' },
    { name: `${shape}.rig`, key: `${prefix}${shape}.rig.json`, bytes: Promise.resolve(new TextEncoder().encode(JSON.stringify(rig))), type: 'application/json' },
    ...Object.entries(textures).map(([name, texture]) => ({
      name: `${shape}.texture.${name}`,
      key: `${prefix}${shape}.${name}.png`,
      bytes: png(texture.rgba, texture.width, texture.height, 4),
      type: 'image/png',
    })),
  ];
  await allSettled(files.map(async (file) => store.put(file.key, await file.bytes, file.type)));
  return Object.fromEntries(files.map((file) => [file.name, file.key]));
}

/**
 * Like Promise.all, but rejects only once every write has finished: the caller deletes the
 * training's prefix on failure, and a write still in flight then would leave an orphan.
 */
async function allSettled<T extends readonly unknown[]>(work: readonly [...{ [K in keyof T]: Promise<T[K]> }]): Promise<T> {
  const results = await Promise.allSettled(work);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/**
 * Fast deflate: on a photo, zlib's level 1 is within 20 % of the default's size at half its
 * time (1.2 MB against 1.0 MB for a 540×960 framing, 20 ms against 45), and creating an
 * identity waits for it.
 */
async function png(pixels: Uint8Array, width: number, height: number, channels: 3 | 4): Promise<Uint8Array> {
  return new Uint8Array(await sharp(pixels, { raw: { width, height, channels } }).png({ compressionLevel: 1, adaptiveFiltering: false }).toBuffer());
}
