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
