// Issue 46.4: at the widest opening the jaw's drop blends into the cheek and the neck, with
// no step in the jaw line, on faces tilted either way. Each stranger's photo is trained as an
// upload is; the map the renderer applies (where each pixel of the lower face is drawn from)
// is read at every pixel below the lower lip: between neighbouring pixels it may change by
// only a little, or the photo's outline, moved by it, bends there into a step. No landmarks
// on the output are trusted.
import { describe, expect, test } from 'bun:test';
import { mapMouth, mouthTables, poseMouth } from '../../../agent/pipelines/builtin/mouth.ts';
import { buildFaceRig } from '../../../src/pipelines/builtin/face-rig.ts';
import { portraitFraming } from './stranger-face.ts';
import { type StrangerPhoto, strangerPhoto } from './stranger-photos.ts';

/**
 * Pixels the map may move two neighbouring pixels apart by. A drop of 26–30 px faded out over
 * ~10 columns at the face's side moved neighbours 3.9–6 px apart, a visible step.
 */
const MAX_JUMP = 3;
/** The warp's rounding at the widest opening (warp.ts: 0.06 × open). */
const WIDE_ROUND = 0.06;

const TILTED: StrangerPhoto[] = ['smiling-tilted-left', 'smiling-tilted-right', 'tilted-far', 'astronaut-small-tilted'];

describe('the jaw line at the widest opening', () => {
  for (const name of TILTED) {
    test(name, async () => {
      const framing = await portraitFraming(await strangerPhoto(name));
      const m = mouthTables(buildFaceRig(framing).rig);
      const open = m.maxOpen;
      poseMouth(m, open, WIDE_ROUND, 0);
      const { x0, x1, y0, y1, ox, oy, ax, ay } = m;
      const width = x1 - x0 + 2;
      const height = y1 - y0 + 2;
      // Where each pixel (one past the box each way, where nothing moves) is drawn from.
      const dx = new Float32Array(width * height);
      const dy = new Float32Array(width * height);
      const below = new Uint8Array(width * height);
      const sx = new Float32Array(width);
      const sy = new Float32Array(width);
      const scratch = [new Float32Array(width), new Float32Array(width), new Float32Array(width)] as const;
      for (let j = 0; j < height; j++) {
        const y = y0 - 1 + j;
        for (let i = 0; i < width; i++) {
          sx[i] = x0 - 1 + i;
          sy[i] = y;
        }
        mapMouth(m, open, WIDE_ROUND, 16, width, sx, sy, ...scratch);
        for (let i = 0; i < width; i++) {
          const x = x0 - 1 + i;
          dx[j * width + i] = sx[i]! - x;
          dy[j * width + i] = sy[i]! - y;
          // Below the lower lip's edge (the lips part by design): the chin, jaw, cheeks and neck.
          const u = (x - ox) * ax + (y - oy) * ay;
          const v = -(x - ox) * ay + (y - oy) * ax;
          const k = Math.round(u - m.u0);
          const edge = m.bottom[Math.max(0, Math.min(m.columns - 1, k))]!;
          below[j * width + i] = v > edge + 2 ? 1 : 0;
        }
      }
      let worst = { jump: 0, x: 0, y: 0 };
      for (let j = 0; j < height; j++) {
        for (let i = 0; i < width; i++) {
          const at = j * width + i;
          if (!below[at]) continue;
          for (const next of [i + 1 < width ? at + 1 : -1, j + 1 < height ? at + width : -1]) {
            if (next < 0 || !below[next]) continue;
            const jump = Math.hypot(dx[next]! - dx[at]!, dy[next]! - dy[at]!);
            if (jump > worst.jump) worst = { jump, x: x0 - 1 + i, y: y0 - 1 + j };
          }
        }
      }
      console.log(
        `${name}: drop ${open.toFixed(1)} px; neighbours move at most ${worst.jump.toFixed(2)} px apart (at ${worst.x}, ${worst.y})`,
      );
      expect(worst.jump).toBeLessThanOrEqual(MAX_JUMP);
    }, 60_000);
  }
});
