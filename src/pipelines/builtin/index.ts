// The built-in CPU pipeline's training (its rendering half is agent/pipelines/builtin).
// Training finds the face (face-detection.ts), frames the photo for each avatar shape
// (framing.ts) and builds the renderer's face rig on each framing (face-rig.ts), so that a
// session only downloads and warps: no face analysis at session start.
import { readFile } from 'node:fs/promises';
import sharp from 'sharp';
import { AVATAR_SHAPES, BUILTIN_PIPELINE_ID, builtinAssetNames, builtinTextureName } from '../../contract/index.ts';
import {
  defaultUploadBounds,
  type ImageVariants,
  type InspectedImage,
  inspectImage,
  renderImageVariants,
} from '../../media/index.ts';
import type { Pipeline } from '../types.ts';
import { type Box, type FoundFace, findFace } from './face-detection.ts';
import { buildFaceRig } from './face-rig.ts';
import { type Framing, frameFace, opaqueRgba } from './framing.ts';

/**
 * What a training of this version holds; an older one is retrained in the background
 * (src/identities). 3: faces found on a crop turned upright (tilted heads' eyes and lips);
 * 4: small faces in large photos read again on an enlarged crop; 5: teeth the photo shows
 * between lips the landmarks closed (teeth-between-lips.ts); 6: the lower lip's edge read
 * from the pixels, a smaller opening where they are unclear (lower-lip-edge.ts); 7: teeth found
 * below a mouth the landmarks drew whole above them (teeth-between-lips.ts, `below`).
 */
export const TRAINING_VERSION = 7;
const FRAMING_JPEG_QUALITY = 92;

/** What the identity row's `training` holds for this pipeline (the renderer reads `assets`). */
export interface BuiltinTraining {
  pipeline: typeof BUILTIN_PIPELINE_ID;
  version: typeof TRAINING_VERSION;
  /** The face trained from, in the uploaded photo's (upright) pixels. */
  face: { box: Box; score: number; faces: number };
  /**
   * Asset keys by name: `<shape>.image` (the framing: JPEG, or PNG in identities trained
   * before 2026-11-21 21:00), `<shape>.rig` (JSON) and
   * `<shape>.texture.<name>` (PNG), for shape `portrait` and `landscape`.
   */
  assets: Record<string, string>;
}

let warming: Promise<void> | undefined;

async function warmTraining(): Promise<void> {
  // A small public-domain portrait (NASA's Eileen Collins, the test suite's astronaut) trained
  // all the way but for storing: models, decoders and every step's code are warm afterwards.
  // Three runs: the JavaScript engine optimises code that has run a few times, not once.
  const photo = new Uint8Array(await readFile(new URL('./warm-up-face.jpg', import.meta.url)));
  for (let run = 0; run < 3; run++) await prepareTraining(await inspectImage(photo, defaultUploadBounds));
}

export const builtinTraining: Pipeline = {
  id: BUILTIN_PIPELINE_ID,
  description: 'Built-in CPU talking head: animates the uploaded photo itself.',
  // Bumping TRAINING_VERSION retrains every older identity in the background (training-upgrades.ts).
  trainingVersion: TRAINING_VERSION,
  warm() {
    // Once per process: the models, decoders and optimised code it warms are the process's, so
    // a second service in it (the suites start hundreds) has nothing left to warm. A warm-up
    // that failed is tried again by the next.
    warming ??= warmTraining().catch((error: unknown) => {
      warming = undefined;
      throw error;
    });
    return warming;
  },
  async checkImage(image) {
    // The rest of the training's pixel work starts now too: create checks the photo while
    // ffmpeg decodes the voice sample, and train() then only stores what is ready.
    prepareTraining(image).catch(() => {});
    await findFace(image);
  },
  async train({ image, store, prefix }) {
    // Nothing is stored before a face is found and every file is encoded.
    const { face, shapes, variants } = await prepareTraining(image);
    const { normalized, render } = variants;
    const imageKey = `${prefix}image.${normalized.ext}`;
    const renderKey = `${prefix}render.png`;
    const files = [
      { key: imageKey, bytes: normalized.bytes, type: normalized.contentType },
      { key: renderKey, bytes: render.bytes, type: 'image/png' },
      ...shapes.flat().map((file) => ({ key: `${prefix}${file.suffix}`, bytes: file.bytes, type: file.type })),
    ];
    await allSettled(files.map((file) => store.put(file.key, file.bytes, file.type)));
    const training: BuiltinTraining = {
      pipeline: BUILTIN_PIPELINE_ID,
      version: TRAINING_VERSION,
      face: { box: face.box, score: face.score, faces: face.faces },
      assets: Object.fromEntries(shapes.flat().map((file) => [file.name, `${prefix}${file.suffix}`])),
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

/** One file of a trained shape: its asset name, its key under the training's prefix, its bytes. */
interface ShapeFile {
  name: string;
  suffix: string;
  bytes: Uint8Array;
  type: string;
}

interface PreparedTraining {
  face: FoundFace;
  shapes: ShapeFile[][];
  variants: ImageVariants;
}

const prepared = new WeakMap<InspectedImage, Promise<PreparedTraining>>();

/**
 * Everything training computes from the photo, before the identity has a place to store it:
 * the face, each shape's framing, rig and textures encoded, the photo's renditions. Memoised
 * per inspected image, so the check and the training share one run.
 */
function prepareTraining(image: InspectedImage): Promise<PreparedTraining> {
  let pending = prepared.get(image);
  if (!pending) {
    // Detection (wasm, this thread) overlaps the photo's encoding (sharp's threads).
    const finding = findFace(image);
    pending = allSettled([
      finding,
      allSettled(AVATAR_SHAPES.map((shape) => finding.then((face) => frameFace(image, face, shape)).then(encodeShape))),
      renderImageVariants(image),
    ]).then(([face, shapes, variants]) => ({ face, shapes, variants }));
    prepared.set(image, pending);
  }
  return pending;
}

/** One shape's framing, rig and textures, encoded. */
async function encodeShape(framing: Framing): Promise<ShapeFile[]> {
  const { shape, width, height } = framing;
  const { rig, textures } = buildFaceRig({
    width,
    height,
    rgba: opaqueRgba(framing.rgb),
    landmarks: framing.landmarks,
  });
  const names = builtinAssetNames(shape);
  return Promise.all([
    jpeg(framing.rgb, width, height).then((bytes) => ({
      name: names.image,
      suffix: `${shape}.jpg`,
      bytes,
      type: 'image/jpeg',
    })),
    {
      name: names.rig,
      suffix: `${shape}.rig.json`,
      bytes: new TextEncoder().encode(JSON.stringify(rig)),
      type: 'application/json',
    },
    ...Object.entries(textures).map(([name, texture]) =>
      png(texture.rgba, texture.width, texture.height, 4).then((bytes) => ({
        name: builtinTextureName(shape, name),
        suffix: `${shape}.${name}.png`,
        bytes,
        type: 'image/png',
      })),
    ),
  ]);
}

/**
 * Like Promise.all, but rejects only once every write has finished: the caller deletes the
 * training's prefix on failure, and a write still in flight then would leave an orphan.
 */
async function allSettled<T extends readonly unknown[]>(
  work: readonly [...{ [K in keyof T]: Promise<T[K]> }],
): Promise<T> {
  const results = await Promise.allSettled(work);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/**
 * The framing, an opaque photo: JPEG at high quality encodes in a third of PNG's time and is a
 * tenth of its size for the session to download, and the renderer turns it into 4:2:0 I420,
 * as JPEG's own chroma subsampling is, anyway.
 */
async function jpeg(rgb: Uint8Array, width: number, height: number): Promise<Uint8Array> {
  return new Uint8Array(
    await sharp(rgb, { raw: { width, height, channels: 3 } })
      .jpeg({ quality: FRAMING_JPEG_QUALITY })
      .toBuffer(),
  );
}

/**
 * The textures (RGBA: they need their alpha). Fast deflate: zlib's level 1 is within 20 % of
 * the default's size at half its time, and creating an identity waits for it.
 */
async function png(pixels: Uint8Array, width: number, height: number, channels: 3 | 4): Promise<Uint8Array> {
  return new Uint8Array(
    await sharp(pixels, { raw: { width, height, channels } })
      .png({ compressionLevel: 1, adaptiveFiltering: false })
      .toBuffer(),
  );
}
