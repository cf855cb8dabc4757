// A local region's frame as its tables hold it (the mouth's, each eye's): the rig's local
// frame unpacked, the u of the tables' first column, and the region's box, locally and in
// the image.
import type { LocalFrame } from '../../../src/contract/face-rig.ts';

export interface ColumnFrame {
  ox: number;
  oy: number;
  ax: number;
  ay: number;
  /** u of column 0 of the tables. */
  u0: number;
  columns: number;
  /** The local box (v range), and its bounding box in the image. */
  vMin: number;
  vMax: number;
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/** A region's frame for its tables: `columns` from u0, rows vMin … vMax, and its box in the image. */
export function columnFrame(
  frame: LocalFrame,
  u0: number,
  columns: number,
  vMin: number,
  vMax: number,
  width: number,
  height: number,
): ColumnFrame {
  return {
    ox: frame.origin[0],
    oy: frame.origin[1],
    ax: frame.axis[0],
    ay: frame.axis[1],
    u0,
    columns,
    vMin,
    vMax,
    ...boundingBox(frame, u0, u0 + columns - 1, vMin, vMax, width, height),
  };
}

/** The image-space box (clamped to the frame) around a local box. */
export function boundingBox(
  frame: LocalFrame,
  uMin: number,
  uMax: number,
  vMin: number,
  vMax: number,
  width: number,
  height: number,
) {
  const xs: number[] = [];
  const ys: number[] = [];
  for (const u of [uMin, uMax]) {
    for (const v of [vMin, vMax]) {
      xs.push(frame.origin[0] + u * frame.axis[0] - v * frame.axis[1]);
      ys.push(frame.origin[1] + u * frame.axis[1] + v * frame.axis[0]);
    }
  }
  return {
    x0: Math.max(0, Math.floor(Math.min(...xs))),
    y0: Math.max(0, Math.floor(Math.min(...ys))),
    x1: Math.min(width, Math.ceil(Math.max(...xs)) + 1),
    y1: Math.min(height, Math.ceil(Math.max(...ys)) + 1),
  };
}
