// What the frame shows beyond the photo, where the photo does not reach the frame's edge (a
// portrait photo in the landscape frame, a tight crop in either): as video calls fill a tile,
// the photo itself, heavily blurred and darkened. A photo that leaves much of the frame bare
// lies on it as a panel (a soft edge, a faint shadow) over a cover of itself; one that nearly
// fills it fades into itself mirrored past its edges, darkening outwards. Continuing each row
// with its edge pixel (what this replaced) drew stretched streaks that read as a fault.
// Computed once at training; the renderer draws it as the still background it is.
import sharp from 'sharp';

/** The photo's outermost pixels fade into the backdrop over this many frame pixels. */
const SEAM = 16;
/** The backdrop under a panel: its brightness and saturation as shares of the photo's. */
const PANEL_BRIGHTNESS = 0.6;
const PANEL_SATURATION = 0.75;
/** The shadow a panel casts: this much darker at the photo's edge, gone this far beyond it. */
const SHADOW_DEPTH = 0.3;
const SHADOW_REACH = 28;
/**
 * Beside a photo that nearly fills the frame, the backdrop darkens from the photo's edge
 * outwards to this share over EXTENSION_REACH pixels: a band of panel-dark backdrop above a
 * portrait read as a bar, and a sliver of it as a dark line.
 */
const EXTENSION_BRIGHTNESS = 0.75;
const EXTENSION_REACH = 64;
/** The share of the frame beyond the photo from which on it is a panel, fully at the second. */
const EXTENSION_SHARE = 0.15;
const PANEL_SHARE = 0.35;
/** The blur: computed at 1/DOWNSCALE of the frame's size, gaussian of BLUR_SIGMA frame pixels. */
const DOWNSCALE = 8;
const BLUR_SIGMA = 40;

/**
 * The framing finished: `rgb` is the photo in the frame, `outside` per pixel how far (frame
 * pixels) it lies beyond the photo's edge (negative on the photo). Pixels well inside the
 * photo are returned untouched.
 */
export async function fillBeyondPhoto(
  rgb: Uint8Array,
  outside: Float32Array,
  width: number,
  height: number,
): Promise<Uint8Array> {
  const photo = photoBox(outside, width, height);
  if (!photo) return rgb;
  // One look for the whole frame: a shading that changed from side to side drew mitres at the corners.
  const panel = smoothstep((photo.bareShare - EXTENSION_SHARE) / (PANEL_SHARE - EXTENSION_SHARE));
  const backdrop = await blurredBackdrop(rgb, photo, width, height, panel);
  const saturation = 1 - panel * (1 - PANEL_SATURATION);
  const scaleX = width / backdrop.width;
  const scaleY = height / backdrop.height;
  const out = rgb.slice();
  const colour = [0, 0, 0];
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      const d = outside[i]!;
      if (d <= -SEAM) continue; // well inside the photo
      // On the photo's side of its edge the photo fades out; beyond it lies the backdrop.
      const keep = d >= 0 ? 0 : smoothstep(-d / SEAM);
      const beyond = Math.max(d, 0);
      const extension = 1 - (1 - EXTENSION_BRIGHTNESS) * smoothstep(beyond / EXTENSION_REACH);
      const shadowed = PANEL_BRIGHTNESS * (1 - SHADOW_DEPTH * (1 - smoothstep(beyond / SHADOW_REACH)));
      const light = extension + panel * (shadowed - extension);
      sampleSmall(backdrop, (x + 0.5) / scaleX - 0.5, (y + 0.5) / scaleY - 0.5, colour);
      const grey = 0.299 * colour[0]! + 0.587 * colour[1]! + 0.114 * colour[2]!;
      const o = i * 3;
      for (let k = 0; k < 3; k++) {
        const shaded = light * (grey + saturation * (colour[k]! - grey));
        out[o + k] = rgb[o + k]! * keep + shaded * (1 - keep) + 0.5;
      }
    }
  }
  return out;
}

interface PhotoBox {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
  /** The share of the frame's pixels beyond the photo. */
  bareShare: number;
}

/** The bounding box of the frame's pixels on the photo, and how much of the frame it leaves bare. */
function photoBox(outside: Float32Array, width: number, height: number): PhotoBox | undefined {
  let x0 = width;
  let y0 = height;
  let x1 = 0;
  let y1 = 0;
  let bare = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (outside[y * width + x]! > 0) {
        bare++;
        continue;
      }
      if (x < x0) x0 = x;
      if (x >= x1) x1 = x + 1;
      if (y < y0) y0 = y;
      if (y >= y1) y1 = y + 1;
    }
  }
  return x1 > x0 && y1 > y0 ? { x0, y0, x1, y1, bareShare: bare / (width * height) } : undefined;
}

/** The backdrop at 1/DOWNSCALE of the frame's size: 8-bit RGB. */
interface SmallImage {
  data: Uint8Array;
  width: number;
  height: number;
}

/**
 * The backdrop, blurred on a copy 1/DOWNSCALE the frame's size: beside a photo that nearly
 * fills the frame, the photo mirrored at its edges (what lies at the seam continues); under a
 * panel, the photo scaled to cover the frame (mirrored copies of a face around it read as a
 * hall of mirrors); in between, a blend of the two.
 */
async function blurredBackdrop(
  rgb: Uint8Array,
  box: PhotoBox,
  width: number,
  height: number,
  panel: number,
): Promise<SmallImage> {
  const small = { width: Math.ceil(width / DOWNSCALE), height: Math.ceil(height / DOWNSCALE) };
  // Two pipelines: within one, sharp resizes before it blurs, whatever the order of the calls.
  const blurred = async (pixels: Promise<Buffer>) => {
    const data = await sharp(await pixels, { raw: { ...small, channels: 3 } })
      .blur(BLUR_SIGMA / DOWNSCALE)
      .raw()
      .toBuffer();
    return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  };
  const source: BackdropSource = { rgb, box, width, height, small };
  const [mirror, cover] = await Promise.all([
    panel < 1 ? blurred(mirrored(source)) : undefined,
    panel > 0 ? blurred(covering(source)) : undefined,
  ]);
  if (!mirror || !cover) return { ...small, data: (mirror ?? cover)! };
  const data = new Uint8Array(mirror.length);
  for (let i = 0; i < data.length; i++) data[i] = mirror[i]! + panel * (cover[i]! - mirror[i]!) + 0.5;
  return { ...small, data };
}

/** What either backdrop is made from: the frame (8-bit RGB), the photo's box in it, the small size to make. */
interface BackdropSource {
  rgb: Uint8Array;
  box: PhotoBox;
  width: number;
  height: number;
  small: { width: number; height: number };
}

/** The photo's part of the frame (its bounding box), for sharp to resize. */
function photoPart({ rgb, box, width, height }: BackdropSource) {
  return sharp(rgb, { raw: { width, height, channels: 3 } }).extract({
    left: box.x0,
    top: box.y0,
    width: box.x1 - box.x0,
    height: box.y1 - box.y0,
  });
}

/** The photo's part of the frame, small, mirrored out to the frame's edges. */
function mirrored(source: BackdropSource): Promise<Buffer> {
  const { x0, y0, x1, y1 } = source.box;
  const { width: smallWidth, height: smallHeight } = source.small;
  const left = Math.min(Math.round(x0 / DOWNSCALE), smallWidth - 1);
  const top = Math.min(Math.round(y0 / DOWNSCALE), smallHeight - 1);
  const boxWidth = clamp(Math.round(x1 / DOWNSCALE) - left, 1, smallWidth - left);
  const boxHeight = clamp(Math.round(y1 / DOWNSCALE) - top, 1, smallHeight - top);
  return photoPart(source)
    .resize(boxWidth, boxHeight, { fit: 'fill', kernel: 'cubic' })
    .extend({
      left,
      top,
      right: smallWidth - left - boxWidth,
      bottom: smallHeight - top - boxHeight,
      extendWith: 'mirror',
    })
    .raw()
    .toBuffer();
}

/** The photo's part of the frame, small, scaled up to cover the frame. */
function covering(source: BackdropSource): Promise<Buffer> {
  const { x0, y0, x1, y1 } = source.box;
  const { width: smallWidth, height: smallHeight } = source.small;
  const boxWidth = x1 - x0;
  const boxHeight = y1 - y0;
  const scale = Math.max(smallWidth / boxWidth, smallHeight / boxHeight);
  const coverWidth = Math.max(smallWidth, Math.ceil(boxWidth * scale));
  const coverHeight = Math.max(smallHeight, Math.ceil(boxHeight * scale));
  // The photo's centre stays where it is in the frame, unless the cover would then leave part
  // of the frame bare: around the photo, the backdrop continues what lies at its edges.
  const offsetX = clamp(Math.round((scale * boxWidth) / 2 - (x0 + x1) / 2 / DOWNSCALE), 0, coverWidth - smallWidth);
  const offsetY = clamp(Math.round((scale * boxHeight) / 2 - (y0 + y1) / 2 / DOWNSCALE), 0, coverHeight - smallHeight);
  return photoPart(source)
    .resize(coverWidth, coverHeight, { fit: 'fill', kernel: 'cubic' })
    .extract({ left: offsetX, top: offsetY, width: smallWidth, height: smallHeight })
    .raw()
    .toBuffer();
}

/** Bilinear, clamped at the edges: enough for a picture blurred over many of its pixels. */
function sampleSmall(image: SmallImage, u: number, v: number, into: number[]): void {
  const uc = clamp(u, 0, image.width - 1);
  const vc = clamp(v, 0, image.height - 1);
  const u0 = Math.floor(uc);
  const v0 = Math.floor(vc);
  const u1 = Math.min(u0 + 1, image.width - 1);
  const v1 = Math.min(v0 + 1, image.height - 1);
  const fu = uc - u0;
  const fv = vc - v0;
  const { data, width } = image;
  for (let k = 0; k < 3; k++) {
    const top = data[(v0 * width + u0) * 3 + k]! * (1 - fu) + data[(v0 * width + u1) * 3 + k]! * fu;
    const bottom = data[(v1 * width + u0) * 3 + k]! * (1 - fu) + data[(v1 * width + u1) * 3 + k]! * fu;
    into[k] = top + (bottom - top) * fv;
  }
}

function smoothstep(t: number): number {
  const c = clamp(t, 0, 1);
  return c * c * (3 - 2 * c);
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(Math.max(value, low), high);
}
