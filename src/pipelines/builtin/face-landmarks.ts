// What a face detection gives back, shared by the detector's thread and its callers.

/** [x, y, width, height] in pixels. */
export type Box = [number, number, number, number];
export type Point = [number, number];

export interface DetectedFace {
  box: Box;
  /** BlazeFace's confidence that this is a face, 0–1. */
  score: number;
  /** FaceMesh's confidence that its landmarks lie on a face, 0–1 (how well the mesh fits). */
  meshScore: number;
  /** FaceMesh's 468 points then 10 iris points (human's order), in the pixels of the image searched. */
  landmarks: Point[];
}

export const LANDMARK_COUNT = 478;

/**
 * BlazeFace's own floor (0.2) is meant for video, where a later frame corrects a false
 * positive; a photo gets one look. The rocket in test/fixtures/no-face.jpg scores 0.34,
 * real faces in our fixtures 0.6–0.9.
 */
export const MIN_FACE_SCORE = 0.5;

/** How many faces one look reports; the largest is chosen, the rest only counted. */
export const MAX_FACES = 10;

/**
 * The face's box is the tight box around its landmarks: human's own box is the detector's
 * guess enlarged by 1.4 and squared, whose size varied by half between two looks at the
 * same face.
 */
export function boundingBox(points: Point[]): Box {
  let [minX, minY, maxX, maxY] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const [x, y] of points) {
    minX = Math.min(minX, x);
    minY = Math.min(minY, y);
    maxX = Math.max(maxX, x);
    maxY = Math.max(maxY, y);
  }
  return [minX, minY, maxX - minX, maxY - minY];
}

// FaceMesh's points the face rig reads (canonical topology: src/pipelines/builtin/face-rig.ts).
export const MOUTH_CORNERS = [61, 291] as const;
export const LIPS_LOWER_INNER = [78, 95, 88, 178, 87, 14, 317, 402, 318, 324, 308];
export const LIPS_UPPER_INNER = [78, 191, 80, 81, 82, 13, 312, 311, 310, 415, 308];
export const LIPS_UPPER_OUTER = [61, 185, 40, 39, 37, 0, 267, 269, 270, 409, 291];
export const LIPS_LOWER_OUTER = [61, 146, 91, 181, 84, 17, 314, 405, 321, 375, 291];
/** Outer/inner lip point pairs: the lip colour is sampled between them. */
export const LIP_BODY_PAIRS: Array<[number, number]> = [
  [0, 13],
  [37, 82],
  [267, 312],
  [39, 81],
  [269, 311],
  [17, 14],
  [84, 87],
  [314, 317],
  [181, 178],
  [405, 402],
];
export const NOSE_BOTTOM = 2;
export const JAW = [93, 132, 58, 172, 136, 150, 149, 176, 148, 152, 377, 400, 378, 379, 365, 397, 288, 361, 323];
export const FACE_OVAL = [
  10, 338, 297, 332, 284, 251, 389, 356, 454, 323, 361, 288, 397, 365, 379, 378, 400, 377, 152, 148, 176, 149, 150, 136,
  172, 58, 132, 93, 234, 127, 162, 21, 54, 103, 67, 109,
];
export const FOREHEAD = 10;
export const CHIN = 152;
/** Per eye: corners, upper lid, lower lid, lower edge of the brow. The first is the image-left eye for an upright, unmirrored face. */
export const EYES = [
  {
    corners: [33, 133],
    upper: [33, 246, 161, 160, 159, 158, 157, 173, 133],
    lower: [33, 7, 163, 144, 145, 153, 154, 155, 133],
    brow: [46, 53, 52, 65, 55],
  },
  {
    corners: [362, 263],
    upper: [362, 398, 384, 385, 386, 387, 388, 466, 263],
    lower: [362, 382, 381, 380, 374, 373, 390, 249, 263],
    brow: [285, 295, 282, 283, 276],
  },
] as const;
