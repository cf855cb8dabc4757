// The mouth texture as the renderer shows it: training's texture (src/pipelines/builtin/
// face-rig.ts) is made of flat bands (teeth, the cavity, the lower teeth's edge) with hard
// steps between them, which read as a grey-purple strip pasted between the lips. Once per
// session, at load, the bands are softened into one another, the upper teeth are shadowed
// under the upper lip, and the cavity falls off from the lips' inner edge (lighter: training
// made it darkest there) into a darker throat past the middle. Done here rather than in
// training, so identities trained before get it too.
import type { Texture } from './sampling.ts';

/** Shadow the upper lip casts on the teeth's top row (share of light kept there). */
const LIP_SHADOW = 0.62;
/**
 * Training darkens the cavity most right under the teeth (its "shadow" is 0.2 of the lips'
 * tone, its throat 0.36): at the lips' inner edge the light is raised by this much, fading out
 * by EDGE_DEPTH of the way down…
 */
const EDGE_LIFT = 0.7;
const EDGE_DEPTH = 0.5;
/** …and the throat, past the middle of the opening, keeps this share: the darkest of the inside. */
const THROAT = 0.62;
const THROAT_AT = 0.6;
const THROAT_SPREAD = 0.25;
/** The bands' steps are smoothed over this share of the texture's height (rows, each way). */
const SOFTEN = 0.08;

export function shadeMouthTexture(texture: Texture, teeth: number, lowerTeeth: number): Texture {
  const { width, height } = texture;
  const [y, u, v] = [texture.y.slice(), texture.u.slice(), texture.v.slice()];
  // The cavity first: lighter at the lips' inner edge (or the teeth's), falling softly into a
  // darker throat; shadow greys colour as well as darkening it.
  const cavityRows = Math.max(1, height - teeth - lowerTeeth);
  for (let row = teeth; row < height; row++) {
    const depth = Math.min(1, Math.max(0, (row - teeth + 0.5) / cavityRows));
    const e = Math.min(1, depth / EDGE_DEPTH);
    const edge = 1 - e * e * (3 - 2 * e);
    const throat = Math.exp(-(((depth - THROAT_AT) / THROAT_SPREAD) ** 2));
    const light = (1 + EDGE_LIFT * edge) * (1 - (1 - THROAT) * throat);
    const tint = Math.min(1, 0.5 + 0.5 * light);
    shadeRow(y, u, v, row * width, width, light, tint);
  }
  // Then the bands are softened into one another; the lower teeth's rows stay as they are
  // (a biting edge rising from behind the lip is crisp).
  const radius = Math.max(1, Math.round(SOFTEN * height));
  const rows = Math.max(1, height - lowerTeeth);
  const [sy, su, sv] = [y, u, v].map((plane) => softenRows(plane, width, rows, radius)) as [
    Float32Array,
    Float32Array,
    Float32Array,
  ];
  // Last, the upper lip's shadow on the upper teeth: darkest at the gum line, lit at the biting edge.
  for (let row = 0; row < teeth; row++) {
    const t = Math.min(1, (row + 0.5) / Math.max(1, 0.7 * teeth));
    shadeRow(sy, su, sv, row * width, width, LIP_SHADOW + (1 - LIP_SHADOW) * t * t * (3 - 2 * t), 1);
  }
  return { width, height, y: sy, u: su, v: sv };
}

function shadeRow(
  y: Float32Array,
  u: Float32Array,
  v: Float32Array,
  from: number,
  width: number,
  light: number,
  tint: number,
): void {
  for (let i = from; i < from + width; i++) {
    y[i] = 16 + (y[i]! - 16) * light;
    u[i] = 128 + (u[i]! - 128) * tint;
    v[i] = 128 + (v[i]! - 128) * tint;
  }
}

/** A box blur down the columns of the first `height` rows, three passes (nearly Gaussian); rows past the ends repeat the edge. */
function softenRows(plane: Float32Array, width: number, height: number, radius: number): Float32Array {
  let from = plane.slice();
  let to = plane.slice();
  for (let pass = 0; pass < 3; pass++) {
    for (let x = 0; x < width; x++) {
      for (let row = 0; row < height; row++) {
        let sum = 0;
        for (let k = -radius; k <= radius; k++) sum += from[Math.min(height - 1, Math.max(0, row + k)) * width + x]!;
        to[row * width + x] = sum / (2 * radius + 1);
      }
    }
    [from, to] = [to, from];
  }
  return from;
}
