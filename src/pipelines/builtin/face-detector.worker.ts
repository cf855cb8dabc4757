// The face detector's own thread. tfjs's wasm kernels run synchronously, about 100 ms for a
// photo: on the server's thread they held up every other request, and the voice sample's
// decoding in the same create call. face-detection.ts sends it photos, one at a time.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Config, FaceResult, Human } from '@vladmandic/human';
import {
  boundingBox,
  type DetectedFace,
  LANDMARK_COUNT,
  MAX_FACES,
  MIN_FACE_SCORE,
  type Point,
} from './face-landmarks.ts';

/** A request: an 8-bit RGB image (width × height × 3 bytes). */
export interface DetectRequest {
  id: number;
  rgb: Uint8Array;
  width: number;
  height: number;
}
export type DetectReply = { id: number; faces: DetectedFace[] } | { id: number; error: string };

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
    modelBasePath: `${pathToFileURL(join(distDir, '..', 'models')).href}/`,
    cacheModels: false,
    warmup: 'none',
    debug: false,
    async: false,
    // One still photo per call: no frame-to-frame caching, no image filters.
    cacheSensitivity: 0,
    filter: { enabled: false } as Config['filter'],
    face: {
      enabled: true,
      detector: {
        rotation: false,
        maxDetected: MAX_FACES,
        minConfidence: MIN_FACE_SCORE,
        skipFrames: 0,
        skipTime: 0,
        return: false,
      },
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
    const { Human: HumanClass } = require(
      join(dirname(require.resolve('@vladmandic/human')), 'human.node-wasm.js'),
    ) as {
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

/** A head rolled more than this (degrees) is looked at again on a crop turned upright. */
const ROLL_TURNED = 12;

/**
 * Every face in the image, in its pixels. On a head rolled 20° or more, the mesh run on an
 * unturned crop put the eyes' and lips' landmarks beside them (a blink closed the cheek, the
 * mouth opened past the lip); run on a crop turned upright (`rotation`) they sit on the
 * features. Turning changes the landmarks of upright and profile faces too, and loses some
 * faces, so only a rolled face is replaced by its turned reading.
 */
async function detect({ rgb, width, height }: DetectRequest): Promise<DetectedFace[]> {
  const human = await loadDetector();
  const tensor = human.tf.tensor3d(rgb, [height, width, 3], 'int32');
  try {
    const faces = await facesIn(human, tensor, false);
    if (!faces.some((face) => Math.abs(rollOf(face)) > ROLL_TURNED)) return faces;
    const turned = await facesIn(human, tensor, true);
    return faces.map((face) => {
      if (Math.abs(rollOf(face)) <= ROLL_TURNED) return face;
      return turned.find((other) => overlap(face.box, other.box) > 0.3) ?? face;
    });
  } finally {
    human.tf.dispose(tensor);
  }
}

/** The head's roll in degrees, from the eyes' outer corners (mesh points 33 and 263). */
function rollOf(face: DetectedFace): number {
  const [x1, y1] = face.landmarks[33]!;
  const [x2, y2] = face.landmarks[263]!;
  return (Math.atan2(y2 - y1, x2 - x1) * 180) / Math.PI;
}

async function facesIn(human: Human, tensor: unknown, rotation: boolean): Promise<DetectedFace[]> {
  // Human merges a call's config into its own: each call says which it wants.
  const result = await human.detect(
    tensor as Parameters<Human['detect']>[0],
    {
      face: { detector: { rotation } },
    } as Partial<Config>,
  );
  if (result.error) throw new Error(`face detection failed: ${result.error}`);
  return result.face
    .filter((face) => face.mesh.length === LANDMARK_COUNT && face.boxScore >= MIN_FACE_SCORE)
    .map(toDetectedFace);
}

// Human keeps per-call state on the instance: one detection at a time, in arrival order.
let queue: Promise<unknown> = Promise.resolve();
declare const self: Worker;
self.onmessage = ({ data }: MessageEvent<DetectRequest>) => {
  queue = queue.then(async () => {
    let reply: DetectReply;
    try {
      reply = { id: data.id, faces: await detect(data) };
    } catch (error) {
      reply = { id: data.id, error: error instanceof Error ? error.message : String(error) };
    }
    self.postMessage(reply);
  });
};

/** Intersection over union of two boxes ([x, y, width, height]). */
function overlap([ax, ay, aw, ah]: DetectedFace['box'], [bx, by, bw, bh]: DetectedFace['box']): number {
  const w = Math.max(0, Math.min(ax + aw, bx + bw) - Math.max(ax, bx));
  const h = Math.max(0, Math.min(ay + ah, by + bh) - Math.max(ay, by));
  const shared = w * h;
  return shared / (aw * ah + bw * bh - shared || 1);
}

function toDetectedFace(face: FaceResult): DetectedFace {
  // Human truncates mesh points to whole pixels; the centre of that pixel is the better guess.
  const landmarks = face.mesh.map(([x, y]): Point => [x + 0.5, y + 0.5]);
  return { box: boundingBox(landmarks), score: face.boxScore, meshScore: face.faceScore, landmarks };
}
