// Finding the face in an identity's photo: BlazeFace, FaceMesh and the iris model of
// @vladmandic/human (MIT; the models ship inside the npm package), run on tfjs's wasm
// backend (Apache-2.0; its .wasm files ship inside @tensorflow/tfjs-backend-wasm). Both
// install offline: no native download at install time, nothing fetched at run time.
import sharp, { type Sharp } from 'sharp';
import { type InspectedImage, MediaError } from '../../media/index.ts';
import type { DetectReply, DetectRequest } from './face-detector.worker.ts';
import { type Box, boundingBox, type DetectedFace, type Point } from './face-landmarks.ts';

export { type Box, type DetectedFace, LANDMARK_COUNT, MIN_FACE_SCORE, type Point } from './face-landmarks.ts';

/** The face an identity is trained from, in the photo's own (upright) pixels. */
export interface FoundFace extends DetectedFace {
  /** How many faces the photo has; the largest was chosen. */
  faces: number;
}

/**
 * Detection runs on a copy whose long side is at most this: BlazeFace looks at a 256 px
 * square of the whole image and FaceMesh at a 192 px crop of the face anyway, so a larger
 * copy only costs time (a 2048 px photo took 365 ms against 100 ms at 640).
 */
export const DETECTION_MAX_SIDE = 640;

/**
 * The smallest face we train from: the longer side of the box around its landmarks
 * (forehead to chin, unless the head lies sideways), in the photo's pixels. The portrait frame shows the
 * face 336 px tall (framing.ts), so 64 px is already a 5× enlargement; below it lips and
 * eyelids are a few pixels wide and the renderer has nothing left to animate.
 */
export const MIN_FACE_SIDE = 64;

/** Bun's Worker: it can stop keeping the process alive. */
type DetectorThread = Worker & { ref(): void; unref(): void };

let detector: DetectorThread | undefined;
let nextRequest = 1;
const waiting = new Map<number, { resolve: (faces: DetectedFace[]) => void; reject: (error: Error) => void }>();

/** The detector's thread, started on first use; its models load there once (≈ 250 ms). */
function detectorThread(): DetectorThread {
  if (detector) return detector;
  const worker = new Worker(new URL('./face-detector.worker.ts', import.meta.url).href) as DetectorThread;
  worker.onmessage = ({ data }: MessageEvent<DetectReply>) => {
    const request = waiting.get(data.id);
    waiting.delete(data.id);
    // Only a thread with work keeps the process alive.
    if (waiting.size === 0) worker.unref();
    if ('error' in data) request?.reject(new Error(data.error));
    else request?.resolve(data.faces);
  };
  worker.onerror = (event) => {
    // A thread that failed is replaced on the next call; its requests fail now.
    detector = undefined;
    for (const request of waiting.values()) request.reject(new Error(`the face detector stopped: ${event.message}`));
    waiting.clear();
  };
  detector = worker;
  return worker;
}

/** Every face in an 8-bit RGB image (width × height × 3 bytes), in its pixels. */
export function detectFaces(rgb: Uint8Array, width: number, height: number): Promise<DetectedFace[]> {
  return new Promise((resolve, reject) => {
    const id = nextRequest++;
    waiting.set(id, { resolve, reject });
    const request: DetectRequest = { id, rgb, width, height };
    const thread = detectorThread();
    thread.ref();
    thread.postMessage(request);
  });
}

/** Transparent photos are seen over white, here and in the framings. */
export const BACKGROUND = { r: 255, g: 255, b: 255 };

/** The photo as a sharp pipeline over its decoded pixels, alpha flattened. */
export function photoPixels(image: InspectedImage): Sharp {
  const pipeline = sharp(image.pixels.data, {
    raw: { width: image.width, height: image.height, channels: image.pixels.channels },
  });
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
  const faces = await facesIn(photoPixels(image), width, height, factor < 1);
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
  let landmarks = largest.landmarks.map(([px, py]): Point => [round2(px * sx), round2(py * sy)]);
  // Only a copy scaled down lost detail: a photo read at its own size keeps its reading.
  if (factor < 1 && Math.max(largest.box[2], largest.box[3]) < CLOSER_LOOK_BELOW)
    landmarks = (await closerLook(image, landmarks)) ?? landmarks;
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
  return { box, score: largest.score, meshScore: largest.meshScore, landmarks, faces: faces.length };
}

/**
 * A face smaller than this (px) in a detection copy scaled down is looked at again on a crop
 * of the photo around it, enlarged: FaceMesh reads a 192 px crop and gives whole pixels, so a face
 * 50 px tall in the copy (100 px in a desktop-sized photo, enlarged 7× in the framing) had its
 * lip corners and lids placed several framing pixels off, and the mouth opened past the lips.
 */
const CLOSER_LOOK_BELOW = 256;
/** The crop spans this multiple of the face's box (the detector needs the face's surroundings)… */
const CLOSER_LOOK_CONTEXT = 2.2;
/** …and is enlarged at most this much. */
const CLOSER_LOOK_ZOOM = 4;

/** The face's landmarks read again on an enlarged crop of the photo round them; undefined when that reading finds no face there. */
async function closerLook(image: InspectedImage, landmarks: Point[]): Promise<Point[] | undefined> {
  const [x, y, w, h] = boundingBox(landmarks);
  const side = CLOSER_LOOK_CONTEXT * Math.max(w, h);
  const left = Math.max(0, Math.floor(x + w / 2 - side / 2));
  const top = Math.max(0, Math.floor(y + h / 2 - side / 2));
  const cropWidth = Math.min(image.width - left, Math.ceil(side));
  const cropHeight = Math.min(image.height - top, Math.ceil(side));
  const zoom = Math.min(CLOSER_LOOK_ZOOM, DETECTION_MAX_SIDE / Math.max(cropWidth, cropHeight));
  const width = Math.max(1, Math.round(cropWidth * zoom));
  const height = Math.max(1, Math.round(cropHeight * zoom));
  const crop = photoPixels(image).extract({ left, top, width: cropWidth, height: cropHeight });
  const faces = await facesIn(crop, width, height, true);
  // The same face: the one whose centre is nearest the crop's.
  const centre = (face: DetectedFace) =>
    Math.hypot(face.box[0] + face.box[2] / 2 - width / 2, face.box[1] + face.box[3] / 2 - height / 2);
  const face = faces.sort((a, b) => centre(a) - centre(b))[0];
  if (!face || centre(face) > 0.25 * Math.min(width, height)) return undefined;
  const sx = cropWidth / width;
  const sy = cropHeight / height;
  return face.landmarks.map(([px, py]): Point => [round2(left + px * sx), round2(top + py * sy)]);
}

/** The faces in these pixels, resized to width × height first when `resize`. */
async function facesIn(pixels: Sharp, width: number, height: number, resize: boolean): Promise<DetectedFace[]> {
  const sized = resize ? pixels.resize(width, height, { kernel: 'lanczos3' }) : pixels;
  const rgb = await sized.removeAlpha().raw().toBuffer();
  return detectFaces(new Uint8Array(rgb.buffer, rgb.byteOffset, rgb.byteLength), width, height);
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
