/**
 * Image uploads: check, decode once, then derive the stored variants from the
 * decoded pixels. Cheap checks (size, magic bytes, header dimensions) run
 * before the expensive full decode so hostile files cost almost nothing.
 */
import sharp from 'sharp';
import { MediaError } from './errors.ts';
import { type ImageKind, sniffImage } from './sniff.ts';
import { assertByteSize, type UploadBounds } from './upload-bounds.ts';

export interface InspectedImage {
  kind: ImageKind;
  /** Upright dimensions, after EXIF orientation. */
  width: number;
  height: number;
  /** True only if some pixel is not fully opaque; an all-opaque alpha channel is dropped. */
  hasAlpha: boolean;
  /**
   * The decoded image, EXIF orientation applied, 8-bit sRGB, interleaved
   * (RGBA when hasAlpha, else RGB), width × height × channels bytes. Variants
   * are built from this so the upload is decoded only once.
   */
  pixels: { data: Uint8Array; channels: 3 | 4 };
}

export interface ImageVariants {
  /** For storage and display: upright, no metadata at all (EXIF/GPS/XMP/ICC), long side ≤ 4096. */
  normalized: {
    bytes: Uint8Array;
    contentType: 'image/jpeg' | 'image/png';
    ext: 'jpg' | 'png';
    width: number;
    height: number;
  };
  /** For the renderer: PNG, long side ≤ 1024, never upscaled. */
  render: { bytes: Uint8Array; width: number; height: number };
}

const NORMALIZED_MAX_SIDE = 4096;
const RENDER_MAX_SIDE = 1024;
const NORMALIZED_JPEG_QUALITY = 90;

/**
 * libvips' `failOn` levels are none < truncated < error < warning. 'error'
 * rejects truncated and corrupt pixel data; 'warning' would also reject
 * photos with harmless libjpeg warnings that every browser displays.
 */
const FAIL_ON = 'error';

const SHARP_FORMAT: Record<ImageKind, string> = { 'image/jpeg': 'jpeg', 'image/png': 'png', 'image/webp': 'webp' };
const KIND_NAME: Record<ImageKind, string> = { 'image/jpeg': 'JPEG', 'image/png': 'PNG', 'image/webp': 'WebP' };

export async function inspectImage(bytes: Uint8Array, bounds: UploadBounds): Promise<InspectedImage> {
  assertByteSize(bytes, 'image', bounds.imageMaxBytes);
  const { kind, animated } = await sniffImage(bytes);
  const name = KIND_NAME[kind];

  // Header only: no pixels are decoded yet. The pixel limit is lifted here so
  // the header can be read and the bomb reported with its real dimensions.
  const header = await sharp(bytes, { failOn: FAIL_ON, limitInputPixels: false })
    .metadata()
    .catch((error: unknown) => {
      throw undecodable(`This file starts like a ${name} image but its header is not valid.`, error);
    });
  if (header.format !== SHARP_FORMAT[kind]) {
    throw undecodable(`This file starts like a ${name} image but decodes as ${header.format}.`);
  }
  if (header.width * header.height > bounds.imageMaxPixels) {
    throw new MediaError(
      422,
      'image',
      `The image is ${header.width}×${header.height} (${megapixels(header.width * header.height)}); the limit is ${megapixels(bounds.imageMaxPixels)}.`,
      'image.too_many_pixels',
    );
  }
  // Which frame of an animation is "the" reference photo is a guess we'd rather not make.
  if (animated || (header.pages ?? 1) > 1) {
    throw new MediaError(422, 'image', 'Animated images are not accepted; upload a still photo.', 'image.animated');
  }
  const upright = header.autoOrient;
  if (Math.min(upright.width, upright.height) < bounds.imageMinShortSide) {
    throw new MediaError(
      422,
      'image',
      `The image is ${upright.width}×${upright.height}; its shorter side must be at least ${bounds.imageMinShortSide} pixels.`,
      'image.too_small',
    );
  }

  const decoded = await sharp(bytes, { failOn: FAIL_ON, limitInputPixels: bounds.imageMaxPixels })
    .autoOrient()
    // Normalises grey, CMYK, 16-bit and ICC-tagged (e.g. Display P3) input to 8-bit sRGB.
    .toColourspace('srgb')
    .raw()
    .toBuffer({ resolveWithObject: true })
    .catch((error: unknown) => {
      throw undecodable(`The ${name} image is damaged or incomplete and could not be decoded.`, error);
    });
  const { width, height, channels } = decoded.info;
  if (width !== upright.width || height !== upright.height || (channels !== 3 && channels !== 4)) {
    throw undecodable(`The ${name} image decoded to unexpected dimensions.`);
  }

  if (channels === 4 && isFullyOpaque(decoded.data)) {
    // Common in screenshots and exports; dropping it lets the image be stored as JPEG.
    const rgb = await sharp(decoded.data, { raw: { width, height, channels: 4 } })
      .removeAlpha()
      .raw()
      .toBuffer();
    return { kind, width, height, hasAlpha: false, pixels: { data: rgb, channels: 3 } };
  }
  return { kind, width, height, hasAlpha: channels === 4, pixels: { data: decoded.data, channels } };
}

export async function renderImageVariants(image: InspectedImage): Promise<ImageVariants> {
  const fromPixels = () =>
    sharp(image.pixels.data, { raw: { width: image.width, height: image.height, channels: image.pixels.channels } });
  const fitInside = (side: number) => ({ width: side, height: side, fit: 'inside' as const, withoutEnlargement: true });

  // Output carries no metadata: sharp only writes EXIF/ICC/XMP when asked to, and raw input has none.
  const normalizedPipeline = fromPixels().resize(fitInside(NORMALIZED_MAX_SIDE));
  const [normalized, render] = await Promise.all([
    (image.hasAlpha
      ? normalizedPipeline.png()
      : normalizedPipeline.jpeg({ quality: NORMALIZED_JPEG_QUALITY })
    ).toBuffer({
      resolveWithObject: true,
    }),
    fromPixels().resize(fitInside(RENDER_MAX_SIDE)).png().toBuffer({ resolveWithObject: true }),
  ]);

  return {
    normalized: {
      bytes: normalized.data,
      contentType: image.hasAlpha ? 'image/png' : 'image/jpeg',
      ext: image.hasAlpha ? 'png' : 'jpg',
      width: normalized.info.width,
      height: normalized.info.height,
    },
    render: {
      bytes: render.data,
      width: render.info.width,
      height: render.info.height,
    },
  };
}

function isFullyOpaque(rgba: Uint8Array): boolean {
  for (let i = 3; i < rgba.length; i += 4) {
    if (rgba[i] !== 255) return false;
  }
  return true;
}

function megapixels(pixels: number): string {
  return `${+(pixels / 1e6).toFixed(1)} megapixels`;
}

function undecodable(message: string, cause?: unknown): MediaError {
  return new MediaError(422, 'image', message, 'image.undecodable', { cause });
}
