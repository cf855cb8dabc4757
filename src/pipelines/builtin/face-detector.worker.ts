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

/** Every face in the image, in its pixels. */
async function detect({ rgb, width, height }: DetectRequest): Promise<DetectedFace[]> {
  const human = await loadDetector();
  const tensor = human.tf.tensor3d(rgb, [height, width, 3], 'int32');
  try {
    const result = await human.detect(tensor);
    if (result.error) throw new Error(`face detection failed: ${result.error}`);
    return result.face
      .filter((face) => face.mesh.length === LANDMARK_COUNT && face.boxScore >= MIN_FACE_SCORE)
      .map(toDetectedFace);
  } finally {
    human.tf.dispose(tensor);
  }
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

function toDetectedFace(face: FaceResult): DetectedFace {
  // Human truncates mesh points to whole pixels; the centre of that pixel is the better guess.
  const landmarks = face.mesh.map(([x, y]): Point => [x + 0.5, y + 0.5]);
  return { box: boundingBox(landmarks), score: face.boxScore, meshScore: face.faceScore, landmarks };
}
