// Finding the face in an identity's photo: BlazeFace, FaceMesh and the iris model of
// @vladmandic/human (MIT; the models ship inside the npm package), run on tfjs's wasm
// backend (Apache-2.0; its .wasm files ship inside @tensorflow/tfjs-backend-wasm). Both
// install offline: no native download at install time, nothing fetched at run time.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import sharp, { type Sharp } from 'sharp';
import type { Config, FaceResult, Human } from '@vladmandic/human';
import { MediaError, type InspectedImage } from '../../identities/media/index.ts';

/** [x, y, width, height] in pixels. */
export type Box = [number, number, number, number];
export type Point = [number, number];

export interface DetectedFace {
  box: Box;
  /** BlazeFace's confidence that this is a face, 0–1. */
  score: number;
  /** FaceMesh's 468 points then 10 iris points (human's order), in the pixels of the image searched. */
  landmarks: Point[];
}

/** The face an identity is trained from, in the photo's own (upright) pixels. */
export interface FoundFace extends DetectedFace {
  /** How many faces the photo has; the largest was chosen. */
  faces: number;
}

export const LANDMARK_COUNT = 478;

/**
 * Detection runs on a copy whose long side is at most this: BlazeFace looks at a 256 px
 * square of the whole image and FaceMesh at a 192 px crop of the face anyway, so a larger
 * copy only costs time (a 2048 px photo took 365 ms against 100 ms at 640).
 */
export const DETECTION_MAX_SIDE = 640;

/**
 * BlazeFace's own floor (0.2) is meant for video, where a later frame corrects a false
 * positive; a photo gets one look. The rocket in test/fixtures/no-face.jpg scores 0.34,
 * real faces in our fixtures 0.6–0.9.
 */
export const MIN_FACE_SCORE = 0.5;

/**
 * The smallest face we train from: the longer side of the box around its landmarks
 * (forehead to chin, unless the head lies sideways), in the photo's pixels. The portrait frame shows the
 * face 336 px tall (framing.ts), so 64 px is already a 5× enlargement; below it lips and
 * eyelids are a few pixels wide and the renderer has nothing left to animate.
 */
export const MIN_FACE_SIDE = 64;

/** How many faces one look reports; the largest is chosen, the rest only counted. */
const MAX_FACES = 10;

const require = createRequire(import.meta.url);

function humanConfig(): Partial<Config> {
  // The package's `exports` map has no `./dist/…` subpaths (its keys lack the `./`), so the
  // wasm build is found next to the node build.
  const distDir = dirname(require.resolve('@vladmandic/human'));
  // tfjs appends the .wasm file names to this folder (dist/, next to its entry file).
  const wasmDir = dirname(require.resolve('@tensorflow/tfjs-backend-wasm'));
  return {
    backend: 'wasm',
    wasmPath: `${wasmDir}/`,
    modelBasePath: pathToFileURL(join(distDir, '..', 'models')).href + '/',
    cacheModels: false,
    warmup: 'none',
    debug: false,
    async: false,
    // One still photo per call: no frame-to-frame caching, no image filters.
    cacheSensitivity: 0,
    filter: { enabled: false } as Config['filter'],
    face: {
      enabled: true,
      detector: { rotation: false, maxDetected: MAX_FACES, minConfidence: MIN_FACE_SCORE, skipFrames: 0, skipTime: 0, return: false },
      mesh: { enabled: true },
      iris: { enabled: true },
      emotion: { enabled: false },
      description: { enabled: false },
      antispoof: { enabled: false },
      liveness: { enabled: false },
      attention: { enabled: false },
    } as Config['face'],
    body: { enabled: false } as Config['body'],
    hand: { enabled: false } as Config['hand'],
    object: { enabled: false } as Config['object'],
    gesture: { enabled: false },
    segmentation: { enabled: false } as Config['segmentation'],
  };
}

let loading: Promise<Human> | undefined;

/** The models load once per process, on first use (≈ 250 ms), and stay loaded. */
function loadDetector(): Promise<Human> {
  loading ??= (async () => {
    const { Human: HumanClass } = require(join(dirname(require.resolve('@vladmandic/human')), 'human.node-wasm.js')) as {
      Human: new (config: Partial<Config>) => Human;
    };
    const human = new HumanClass(humanConfig());
    await human.load();
    return human;
  })().catch((error: unknown) => {
    loading = undefined; // let a later call try again
    throw error;
  });
  return loading;
}

// Human keeps per-call state on the instance: one detection at a time.
let queue: Promise<unknown> = Promise.resolve();
function oneAtATime<T>(work: () => Promise<T>): Promise<T> {
  const run = queue.then(work, work);
  queue = run.catch(() => undefined);
  return run;
}

/** Every face in an 8-bit RGB image (width × height × 3 bytes), in its pixels. */
export function detectFaces(rgb: Uint8Array, width: number, height: number): Promise<DetectedFace[]> {
  return oneAtATime(async () => {
    const human = await loadDetector();
    const tensor = human.tf.tensor3d(rgb, [height, width, 3], 'int32');
    try {
      const result = await human.detect(tensor);
      if (result.error) throw new Error(`face detection failed: ${result.error}`);
      return result.face.filter((face) => face.mesh.length === LANDMARK_COUNT && face.boxScore >= MIN_FACE_SCORE).map(toDetectedFace);
    } finally {
      human.tf.dispose(tensor);
    }
  });
}

function toDetectedFace(face: FaceResult): DetectedFace {
  // Human truncates mesh points to whole pixels; the centre of that pixel is the better guess.
  const landmarks = face.mesh.map(([x, y]): Point => [x + 0.5, y + 0.5]);
  return { box: boundingBox(landmarks), score: face.boxScore, landmarks };
}

/**
 * The face's box is the tight box around its landmarks: human's own box is the detector's
 * guess enlarged by 1.4 and squared, whose size varied by half between two looks at the
 * same face.
 */
function boundingBox(points: Point[]): Box {
  let [minX, minY, maxX, maxY] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const [x, y] of points) {
    minX = Math.min(minX, x);
    minY = Math.min(minY, y);
    maxX = Math.max(maxX, x);
    maxY = Math.max(maxY, y);
  }
  return [minX, minY, maxX - minX, maxY - minY];
}

/** Transparent photos are seen over white, here and in the framings. */
export const BACKGROUND = { r: 255, g: 255, b: 255 };

/** The photo as a sharp pipeline over its decoded pixels, alpha flattened. */
export function photoPixels(image: InspectedImage): Sharp {
  const pipeline = sharp(image.pixels.data, { raw: { width: image.width, height: image.height, channels: image.pixels.channels } });
  return image.hasAlpha ? pipeline.flatten({ background: BACKGROUND }) : pipeline;
}

const found = new WeakMap<InspectedImage, Promise<FoundFace>>();

/**
 * The face to train from: the largest one in the photo, in the photo's pixels. Rejects
 * (422) a photo without a face, or whose face is too small to animate. Memoised per
 * inspected image, so checking an upload and then training from it detects once.
 */
export function findFace(image: InspectedImage): Promise<FoundFace> {
  let pending = found.get(image);
  if (!pending) {
    pending = searchPhoto(image);
    found.set(image, pending);
  }
  return pending;
}

async function searchPhoto(image: InspectedImage): Promise<FoundFace> {
  const factor = Math.min(1, DETECTION_MAX_SIDE / Math.max(image.width, image.height));
  const width = Math.max(1, Math.round(image.width * factor));
  const height = Math.max(1, Math.round(image.height * factor));
  let pipeline = photoPixels(image);
  if (factor < 1) pipeline = pipeline.resize(width, height, { kernel: 'lanczos3' });
  const rgb = await pipeline.removeAlpha().raw().toBuffer();
  const faces = await detectFaces(new Uint8Array(rgb.buffer, rgb.byteOffset, rgb.byteLength), width, height);
  if (!faces.length) {
    throw new MediaError(
      422,
      'image',
      'No face found in the image; upload a photo in which one face is clearly visible, facing the camera.',
      'image.no_face',
    );
  }
  const largest = faces.reduce((a, b) => (b.box[2] * b.box[3] > a.box[2] * a.box[3] ? b : a));
  // Back to the photo's pixels (the copy may have been scaled down).
  const sx = image.width / width;
  const sy = image.height / height;
  const landmarks = largest.landmarks.map(([px, py]): Point => [round2(px * sx), round2(py * sy)]);
  const [x, y, w, h] = boundingBox(landmarks);
  // Whole pixels, still around every landmark.
  const box: Box = [Math.floor(x), Math.floor(y), Math.ceil(x + w) - Math.floor(x), Math.ceil(y + h) - Math.floor(y)];
  if (Math.max(box[2], box[3]) < MIN_FACE_SIDE) {
    throw new MediaError(
      422,
      'image',
      `The face in the image is too small (${box[2]}×${box[3]} pixels); it must measure at least ${MIN_FACE_SIDE} pixels from forehead to chin. Crop the photo closer around the face, or upload a larger one.`,
      'image.face_too_small',
    );
  }
  return { box, score: largest.score, landmarks, faces: faces.length };
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
