// The mouth texture as the renderer shows it: training's texture (src/pipelines/builtin/
// face-rig.ts) is made of flat bands (teeth, the cavity, the lower teeth's edge) with hard
// steps between them, which read as a grey-purple strip pasted between the lips. Once per
// session, at load, the bands are softened into one another, the upper teeth are shadowed
// under the upper lip, and the cavity falls off from the lips' inner edge into a darker
// throat. Done here rather than in training, so identities trained before get it too.
import type { Texture } from './sampling.ts';

/** Shadow the upper lip casts on the teeth's top row (share of light kept there). */
const LIP_SHADOW = 0.62;
/** The throat, deepest in the cavity, keeps this share of the cavity's light. */
const THROAT = 0.7;
/** The bands' steps are smoothed over this share of the texture's height (rows, each way). */
const SOFTEN = 0.08;

export function shadeMouthTexture(texture: Texture, teeth: number, lowerTeeth: number): Texture {
  const { width, height } = texture;
  const radius = Math.max(1, Math.round(SOFTEN * height));
  // The lower teeth's rows stay as they are: a biting edge rising from behind the lip is crisp.
  const planes = [texture.y, texture.u, texture.v].map((plane) =>
    softenRows(plane, width, Math.max(1, height - lowerTeeth), radius),
  );
  const [y, u, v] = planes as [Float32Array, Float32Array, Float32Array];
  const cavityRows = Math.max(1, height - teeth - lowerTeeth);
  for (let row = 0; row < height; row++) {
    let light: number;
    if (teeth > 0 && row < teeth) {
      // Under the upper lip: darkest at the gum line, lit by the biting edge.
      const t = Math.min(1, (row + 0.5) / Math.max(1, 0.7 * teeth));
      light = LIP_SHADOW + (1 - LIP_SHADOW) * t * t * (3 - 2 * t);
    } else {
      // From the inner edge of the lips (or the teeth) into the throat, then back up to the lower teeth.
      const depth = Math.min(1, Math.max(0, (row - teeth) / cavityRows));
      const bowl = Math.sin(Math.PI * depth);
      light = 1 - (1 - THROAT) * bowl;
    }
    for (let x = 0; x < width; x++) {
      const i = row * width + x;
      y[i] = 16 + (y[i]! - 16) * light;
      // Shadow greys colour as well as darkening it.
      u[i] = 128 + (u[i]! - 128) * (0.5 + 0.5 * light);
      v[i] = 128 + (v[i]! - 128) * (0.5 + 0.5 * light);
    }
  }
  return { width, height, y, u, v };
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
