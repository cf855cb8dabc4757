// The face rig training builds on each framing (src/pipelines/builtin/face-rig.ts): small,
// JSON, placed where the landmarks say, with a mouth texture coloured from the photo.
import { describe, expect, test } from 'bun:test';
import { buildFaceRig, type FaceRigInput } from '../../../src/pipelines/builtin/face-rig.ts';
import { faceFraming } from './face.ts';

function pixel(texture: { width: number; rgba: Uint8Array }, x: number, y: number): [number, number, number] {
  const i = (y * texture.width + x) * 4;
  return [texture.rgba[i]!, texture.rgba[i + 1]!, texture.rgba[i + 2]!];
}

const luma = ([r, g, b]: [number, number, number]) => 0.299 * r + 0.587 * g + 0.114 * b;

describe('the face rig', () => {
  test.each(['portrait', 'landscape'] as const)(
    'astronaut, %s: small JSON, on the landmarks, a dark lip-tinted mouth',
    async (shape) => {
      const framing = await faceFraming('astronaut', shape);
      const { rig, textures } = buildFaceRig(framing);
      const json = JSON.stringify(rig);
      expect(json.length).toBeLessThan(100 * 1024);
      expect(JSON.parse(json)).toEqual(rig);
      expect([rig.width, rig.height]).toEqual([framing.width, framing.height]);
      // The mouth's frame spans its corners (FaceMesh 61 and 291); the eyes sit on theirs.
      const [left, right] = [framing.landmarks[61]!, framing.landmarks[291]!];
      expect(rig.mouth.origin[0]).toBeCloseTo((left[0] + right[0]) / 2, 0);
      expect(rig.mouth.origin[1]).toBeCloseTo((left[1] + right[1]) / 2, 0);
      expect(rig.mouth.corners[1] - rig.mouth.corners[0]).toBeCloseTo(
        Math.hypot(right[0] - left[0], right[1] - left[1]),
        0,
      );
      expect(rig.eyes).toHaveLength(2);
      for (const eye of rig.eyes) {
        // Lids: the upper above the lower, the crease above both.
        for (const [u, v] of eye.upper.slice(1, -1)) {
          const below = eye.lower.find(([lu]) => Math.abs(lu - u) < 3);
          if (below) expect(below[1]).toBeGreaterThan(v);
        }
        expect(Math.max(...eye.crease.map(([, v]) => v))).toBeLessThan(Math.min(...eye.upper.map(([, v]) => v)));
      }
      expect(rig.head.faceHeight).toBeCloseTo(
        Math.hypot(
          framing.landmarks[152]![0] - framing.landmarks[10]![0],
          framing.landmarks[152]![1] - framing.landmarks[10]![1],
        ),
        0,
      );
      // Her smile shows her teeth: the texture adds none, and is a dark red-brown from her lips.
      expect(rig.mouth.teeth).toBe(0);
      const mouth = textures.mouth!;
      expect(mouth.rgba.length).toBe(mouth.width * mouth.height * 4);
      expect(mouth.width).toBeGreaterThanOrEqual(Math.round(rig.mouth.corners[1] - rig.mouth.corners[0]));
      const middle = pixel(mouth, mouth.width >> 1, mouth.height >> 2);
      expect(luma(middle)).toBeLessThan(60);
      expect(middle[0]).toBeGreaterThan(middle[2]);
    },
  );

  test('a closed-lipped greyscale face gets teeth in a grey mouth', async () => {
    const framing = await faceFraming('cameraman', 'portrait');
    const { rig, textures } = buildFaceRig(framing);
    expect(rig.mouth.teeth).toBeGreaterThan(0);
    const mouth = textures.mouth!;
    const teeth = pixel(mouth, mouth.width >> 1, rig.mouth.teeth >> 1);
    const throat = pixel(mouth, mouth.width >> 1, mouth.height - 2 - ((mouth.height - rig.mouth.teeth) >> 1));
    expect(luma(teeth)).toBeGreaterThan(luma(throat) + 80);
    // The photo has no colour, nor has its mouth.
    for (const colour of [teeth, throat]) expect(Math.max(...colour) - Math.min(...colour)).toBeLessThanOrEqual(2);
  });

  test('teeth a photo does not show are lit as its skin is: a brighter copy gets brighter teeth', async () => {
    const framing = await faceFraming('cameraman', 'portrait');
    const brighter = {
      ...framing,
      rgba: framing.rgba.map((value, i) => (i % 4 === 3 ? value : Math.min(255, Math.round(value * 1.3)))),
    };
    const teethOf = (input: FaceRigInput) => {
      const { rig, textures } = buildFaceRig(input);
      return luma(pixel(textures.mouth!, textures.mouth!.width >> 1, rig.mouth.teeth >> 1));
    };
    const [dim, bright] = [teethOf(framing), teethOf(brighter)];
    // (A fixed off-white made both the same, and glowed in dim photos.)
    expect(bright).toBeGreaterThan(dim + 25);
    expect(dim).toBeLessThan(180);
  });

  test.each(['astronaut', 'cameraman'] as const)(
    "%s: the mouth's inside has depth, a tongue and lower teeth, and no flat black",
    async (photo) => {
      const framing = await faceFraming(photo, 'portrait');
      const { rig, textures } = buildFaceRig(framing);
      const mouth = textures.mouth!;
      const lower = rig.mouth.lowerTeeth!;
      expect(lower).toBeGreaterThanOrEqual(2);
      const centre = mouth.width >> 1;
      const cavityTop = rig.mouth.teeth;
      const cavityBottom = mouth.height - lower;
      // Right under the upper teeth the cavity is in shadow; the tongue below it is lighter.
      const shadow = luma(pixel(mouth, centre, cavityTop));
      const tongue = luma(pixel(mouth, centre, cavityBottom - 2));
      expect(tongue).toBeGreaterThan(shadow + 15);
      // The lower teeth's edge is light in the middle and gives way to the cavity toward the corners.
      const lowerMiddle = luma(pixel(mouth, centre, cavityBottom + 1));
      const lowerCorner = luma(pixel(mouth, Math.round(mouth.width * 0.08), cavityBottom + 1));
      expect(lowerMiddle).toBeGreaterThan(tongue + 20);
      expect(lowerMiddle).toBeGreaterThan(lowerCorner + 40);
      // Shaded from the lips' own tones, never black, even in the corners.
      for (let y = 0; y < mouth.height; y++) expect(luma(pixel(mouth, centre, y))).toBeGreaterThan(15);
      // A photo that shows its teeth keeps its upper lip's inner edge (pressing the lips closes over it); closed lips need none.
      if (photo === 'astronaut') {
        expect(rig.mouth.inner!.length).toBeGreaterThan(5);
        for (const [u, v] of rig.mouth.inner!.slice(2, -2))
          expect(v).toBeLessThan(
            rig.mouth.split.reduce((best, p) => (Math.abs(p[0] - u) < Math.abs(best[0] - u) ? p : best))[1],
          );
      } else {
        expect(rig.mouth.inner).toBeUndefined();
      }
    },
  );

  test('refuses what is not a face', async () => {
    const framing = await faceFraming('astronaut', 'portrait');
    const withLandmarks = (landmarks: Array<[number, number]>): FaceRigInput => ({ ...framing, landmarks });
    expect(() => buildFaceRig(withLandmarks(framing.landmarks.slice(0, 100)))).toThrow(/468/);
    expect(() =>
      buildFaceRig(withLandmarks(framing.landmarks.map(([x, y], i) => (i === 13 ? [Number.NaN, y] : [x, y])))),
    ).toThrow(/finite/);
    expect(() => buildFaceRig(withLandmarks(framing.landmarks.map((): [number, number] => [10, 10])))).toThrow(
      /degenerate|span/,
    );
    expect(() => buildFaceRig({ ...framing, rgba: framing.rgba.subarray(4) })).toThrow(/RGBA/);
  });
});
