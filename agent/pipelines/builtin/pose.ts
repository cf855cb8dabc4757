// What the renderer asks the warp for, each frame: the face's pose, from the lips to the
// head. The warp (warp.ts) bounds each part and redraws only what moved by a visible step.

/** Where the face is this instant. */
export interface FacePose {
  /** 0 closed … 1 wide open. */
  open: number;
  /** Lips drawn together (positive, an "oo") or spread (negative, an "ee"); about ±0.1. */
  round: number;
  /**
   * 0 as in the photo … 1 lips pressed together (m, b, p), when the photo shows the mouth's
   * inside; ignored while the mouth is open, and for photos with closed lips.
   */
  press: number;
  /** 0 open … 1 closed eyelids. */
  blink: number;
  /** Where the eyes look, sideways: a share of the eye's half-width (positive: image right); about ±0.3. */
  gaze: number;
  /** 0 … 1: the brows lifted (an accent). */
  brow: number;
  /** Head translation, px (the warp keeps it within 3 % of the face's height). */
  dx: number;
  dy: number;
  /** Head roll about the neck, radians (positive: clockwise on screen; the warp keeps it within 0.04). */
  roll: number;
}

export const NEUTRAL_POSE: Readonly<FacePose> = {
  open: 0,
  round: 0,
  press: 0,
  blink: 0,
  gaze: 0,
  brow: 0,
  dx: 0,
  dy: 0,
  roll: 0,
};
