// Teeth the landmark model closed the lips over (src/pipelines/builtin/teeth-between-lips.ts).
// On `smiling-tilted-left` FaceMesh draws both inner lip lines along the upper lip, though the
// photo shows a band of teeth: read as closed, speaking opened a dark gap over the top of the
// teeth and pushed them down with the lower lip. Training now reads the teeth from the photo;
// closed lips (in colour or greyscale) stay closed.
import { describe, expect, test } from 'bun:test';
import { VideoBufferType, VideoFrame } from '@livekit/rtc-node';
import { NEUTRAL_POSE } from '../../../agent/pipelines/builtin/pose.ts';
import { FaceWarp, i420Length } from '../../../agent/pipelines/builtin/warp.ts';
import { interpolate, type LocalFrame, type Point, toLocal, UPPER_LIFT } from '../../../src/contract/face-rig.ts';
import { buildFaceRig, VISIBLE_INTERIOR_PER_WIDTH } from '../../../src/pipelines/builtin/face-rig.ts';
import { teethBand } from '../../../src/pipelines/builtin/teeth-between-lips.ts';
import { faceFraming } from './face.ts';
import { portraitFraming } from './stranger-face.ts';
import { strangerPhoto } from './stranger-photos.ts';

describe('teeth between lips the landmarks closed', () => {
  test('smiling-tilted-left: read parted at its teeth, which stay put as the mouth opens', async () => {
    const framing = await portraitFraming(await strangerPhoto('smiling-tilted-left'));
    const { width, height, rgba, landmarks } = framing;
    const { rig, textures } = buildFaceRig(framing);
    const m = rig.mouth;
    // The landmarks alone close the lips (the case this is about)…
    const frame: LocalFrame = { origin: m.origin, axis: m.axis };
    const innerGap = toLocal(frame, landmarks[14]!)[1] - toLocal(frame, landmarks[13]!)[1];
    expect(innerGap).toBeLessThan(VISIBLE_INTERIOR_PER_WIDTH * (m.corners[1] - m.corners[0]));
    // …the rig reads the lips parted, with the photo's own teeth (none generated).
    expect(m.inner).toBeDefined();
    expect(m.teeth).toBe(0);
    const lumaOf = (pixels: Uint8Array, [x, y]: Point) => {
      const i = (Math.round(y) * width + Math.round(x)) * 4;
      return 0.299 * pixels[i]! + 0.587 * pixels[i + 1]! + 0.114 * pixels[i + 2]!;
    };
    const at = (v: number): Point => [m.origin[0] - v * m.axis[1], m.origin[1] + v * m.axis[0]];
    const split = interpolate(m.split, 0);
    const upper = interpolate(m.inner!, 0);
    // The teeth lie between the new lines: brighter than the lip just below the split.
    const teeth = mean(range(upper + 1, split - 1).map((v) => lumaOf(rgba, at(v))));
    const lowerLip = mean(range(split + 2, split + 6).map((v) => lumaOf(rgba, at(v))));
    expect(teeth - lowerLip).toBeGreaterThanOrEqual(15);

    // Opened wide, the teeth are where the photo has them: the upper jaw does not move.
    const base = new VideoFrame(rgba, width, height, VideoBufferType.RGBA).convert(VideoBufferType.I420).data;
    const warp = new FaceWarp(rig, new Uint8Array(base), textures.mouth);
    const out = new Uint8Array(i420Length(width, height));
    warp.paintBase(out);
    warp.render({ ...NEUTRAL_POSE, open: 1 }, out);
    const drawn = (v: number) => {
      const [x, y] = at(v);
      return out[Math.round(y) * width + Math.round(x)]!;
    };
    // (Their lowest rows go under the upper lip's lift, UPPER_LIFT of the opening.)
    const moved = range(upper + 1, split - UPPER_LIFT * m.maxOpen - 1).map((v) =>
      Math.abs(drawn(v) - base[Math.round(at(v)[1]) * width + Math.round(at(v)[0])]!),
    );
    expect(mean(moved)).toBeLessThanOrEqual(8);
    // Below them the mouth opened: darker than the teeth were.
    expect(mean(range(split + 2, split + 0.5 * m.maxOpen).map(drawn))).toBeLessThan(teeth - 40);
  });

  test.each(['glasses', 'stubble', 'smiling-man', 'small'] as const)('%s: closed lips stay closed', async (name) => {
    const { rig } = buildFaceRig(await portraitFraming(await strangerPhoto(name)));
    expect(rig.mouth.inner).toBeUndefined();
    expect(rig.mouth.teeth).toBeGreaterThan(0);
  });

  test('a greyscale mouth is read as the landmarks say: the cameraman stays closed', async () => {
    const { rig } = buildFaceRig(await faceFraming('cameraman', 'portrait'));
    expect(rig.mouth.inner).toBeUndefined();
  });
});

describe('the teeth band, on drawn mouths', () => {
  const LIP: Rgb = [190, 95, 100];
  const SKIN: Rgb = [215, 170, 140];
  const TEETH: Rgb = [235, 228, 215];
  /** A 100×100 mouth, axis level, middle at (50, 40): lips from 0 to 30 in `lip`, the band `middle` from 10 to `end`. */
  function mouth(middle: Rgb | undefined, { lip = LIP, skin = SKIN, end = 22 } = {}) {
    const width = 100;
    const height = 100;
    const rgba = new Uint8Array(width * height * 4);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const v = y - 40;
        const colour = v < 0 || v >= 30 ? skin : v >= 10 && v < end && middle ? middle : lip;
        rgba.set([...colour, 255], (y * width + x) * 4);
      }
    }
    const lips = {
      frame: { origin: [50, 40] as Point, axis: [1, 0] as Point },
      corners: [-40, 40] as Point,
      upperOuter: [
        [-40, 0],
        [0, 0],
        [40, 0],
      ] as Point[],
      lowerOuter: [
        [-40, 30],
        [0, 30],
        [40, 30],
      ] as Point[],
    };
    // The rig's minimum: its share of the mouth's width (80 px here).
    return teethBand({ width, height, rgba }, lips, VISIBLE_INTERIOR_PER_WIDTH * 80);
  }

  test('teeth between two lips are found, at their edges', () => {
    const band = mouth(TEETH);
    // Read at half-pixel steps from whole pixels: to a pixel.
    expect(Math.abs(band!.top - 10)).toBeLessThanOrEqual(1);
    expect(Math.abs(band!.bottom - 21.5)).toBeLessThanOrEqual(1);
  });
  test('closed lips show none', () => expect(mouth(undefined)).toBeUndefined());

  /**
   * The landmarks' whole mouth above the photo's teeth (grid-5-6-tilted-ccw-20's case): lips drawn
   * from 0 to 14, the photo's lip to 16, then `band` to 30, then `under` (a dark sleeve).
   */
  function below(band: Rgb, under: Rgb = [25, 12, 14]) {
    const width = 100;
    const height = 100;
    const rgba = new Uint8Array(width * height * 4);
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++) {
        const v = y - 40;
        rgba.set([...(v < 0 ? SKIN : v < 16 ? LIP : v < 30 ? band : under), 255], (y * width + x) * 4);
      }
    const line = (v: number) => [[-40, v] as Point, [0, v] as Point, [40, v] as Point];
    const lips = {
      frame: { origin: [50, 40] as Point, axis: [1, 0] as Point },
      corners: [-40, 40] as Point,
      upperOuter: line(0),
      lowerOuter: line(14),
    };
    const read = (search: 'between' | 'below') =>
      teethBand({ width, height, rgba }, lips, VISIBLE_INTERIOR_PER_WIDTH * 80, search);
    return { between: read('between'), below: read('below') };
  }

  test("teeth below the landmarks' mouth: found looking below, to their edges", () => {
    const { between, below: band } = below(TEETH);
    expect(between).toBeUndefined();
    expect(Math.abs(band!.top - 16)).toBeLessThanOrEqual(1);
    expect(Math.abs(band!.bottom - 29.5)).toBeLessThanOrEqual(1);
  });
  test('a lit chin under closed lips is no teeth below them: too saturated', () => {
    // Brighter than the lips and less saturated than them, as teeth are, but not greyer by half.
    expect(below([240, 190, 160], [150, 100, 80]).below).toBeUndefined();
    expect(below(TEETH, [150, 100, 80]).below).toBeDefined();
  });
  test('a lit lip is no teeth: as saturated as the lips', () => expect(mouth([240, 130, 135])).toBeUndefined());
  test('too thin to be an opening: none', () => expect(mouth(TEETH, { end: 13 })).toBeUndefined());
  test('greyscale: none, whatever the band', () => {
    const grey = (c: Rgb): Rgb => {
      const l = Math.round(0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]);
      return [l, l, l];
    };
    expect(mouth(grey(TEETH), { lip: grey(LIP), skin: grey(SKIN) })).toBeUndefined();
    // The same band in colour is found.
    expect(mouth(TEETH)).toBeDefined();
  });
});

type Rgb = [number, number, number];

function range(from: number, to: number): number[] {
  const values: number[] = [];
  for (let v = from; v <= to; v += 0.5) values.push(v);
  return values;
}

function mean(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}
