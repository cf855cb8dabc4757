import { describe, expect, test } from 'bun:test';
import sharp from 'sharp';
import { defaultUploadBounds, type InspectedImage, inspectImage } from '../../src/media/index.ts';
import * as fixtures from '../fixtures/index.ts';
import { expectMediaError } from './expect-media-error.ts';

const limits = defaultUploadBounds;

describe('inspectImage accepts real photos', () => {
  test('PNG portrait decodes with its dimensions', async () => {
    const image = await inspectImage(fixtures.portraitPng(), limits);
    expect(image).toMatchObject({ kind: 'image/png', width: 512, height: 512, hasAlpha: false });
    expect(image.pixels.channels).toBe(3);
    expect(image.pixels.data.byteLength).toBe(512 * 512 * 3);
  });

  test('JPEG portrait (1920×1280) decodes with its dimensions', async () => {
    const image = await inspectImage(await fixtures.portraitJpeg({ width: 1920, height: 1280 }), limits);
    expect(image).toMatchObject({ kind: 'image/jpeg', width: 1920, height: 1280, hasAlpha: false });
    expect(image.pixels.data.byteLength).toBe(1920 * 1280 * 3);
  });

  test('WebP portrait decodes with its dimensions', async () => {
    const image = await inspectImage(await fixtures.portraitWebp({ width: 600, height: 800 }), limits);
    expect(image).toMatchObject({ kind: 'image/webp', width: 600, height: 800 });
  });

  test('the no-face photo is a valid image too (face checks are not this module’s job)', async () => {
    const image = await inspectImage(fixtures.noFaceJpeg(), limits);
    expect(image).toMatchObject({ kind: 'image/jpeg', width: 640, height: 427 });
  });

  test('greyscale PNG, 16-bit PNG and CMYK JPEG are normalised to 8-bit RGB pixels', async () => {
    for (const bytes of [await fixtures.greyscalePng(), await fixtures.sixteenBitPng(), await fixtures.cmykJpeg()]) {
      const image = await inspectImage(bytes, limits);
      expect(image.hasAlpha).toBe(false);
      expect(image.pixels.channels).toBe(3);
      expect(image.pixels.data.byteLength).toBe(512 * 512 * 3);
    }
  });

  test('ICC-tagged (Display P3) pixels are converted to sRGB, since the stored variants carry no profile', async () => {
    const bytes = await fixtures.displayP3Jpeg({ r: 200, g: 100, b: 50 });
    const storedValues = [...(await sharp(bytes, { ignoreIcc: true }).raw().toBuffer()).subarray(0, 3)];
    expect(Math.abs(storedValues[0]! - 200)).toBeGreaterThan(8); // P3 encodes this colour differently
    const image = await inspectImage(bytes, limits);
    const [r, g, b] = image.pixels.data;
    expect([Math.abs(r! - 200), Math.abs(g! - 100), Math.abs(b! - 50)].every((error) => error <= 3)).toBe(true);
  });

  test('translucent PNG keeps its alpha; an all-opaque alpha channel is dropped', async () => {
    const translucent = await inspectImage(await fixtures.portraitPngWithAlpha(), limits);
    expect(translucent.hasAlpha).toBe(true);
    expect(translucent.pixels.channels).toBe(4);
    const opaqueUpload = await fixtures.portraitPngWithAlpha({ opaque: true });
    expect((await sharp(opaqueUpload).metadata()).channels).toBe(4);
    const opaque = await inspectImage(opaqueUpload, limits);
    expect(opaque.hasAlpha).toBe(false);
    expect(opaque.pixels.channels).toBe(3);
  });
});

describe('EXIF orientation is applied', () => {
  test('orientation 6 swaps width and height', async () => {
    const bytes = await fixtures.portraitJpeg({ width: 1280, height: 1920, exifOrientation: 6 });
    const stored = await sharp(bytes).metadata();
    expect({ width: stored.width, height: stored.height, orientation: stored.orientation }).toEqual({
      width: 1920,
      height: 1280,
      orientation: 6,
    });
    const image = await inspectImage(bytes, limits);
    expect({ width: image.width, height: image.height }).toEqual({ width: 1280, height: 1920 });
  });

  test('all eight orientations decode to the same upright picture', async () => {
    const size = { width: 320, height: 480 };
    const upright = await inspectImage(await fixtures.portraitJpeg(size), limits);
    for (let orientation = 2; orientation <= 8; orientation++) {
      const image = await inspectImage(await fixtures.portraitJpeg({ ...size, exifOrientation: orientation }), limits);
      expect({ orientation, width: image.width, height: image.height }).toEqual({ orientation, ...size });
      // Re-encoding a rotated image shifts JPEG artefacts a little; a wrong rotation differs by far more.
      expect({ orientation, difference: meanAbsoluteDifference(image, upright) < 4 }).toEqual({
        orientation,
        difference: true,
      });
    }
  });
});

describe('size rules', () => {
  test('an empty file is rejected with 422 file.empty', async () => {
    await expectMediaError(inspectImage(new Uint8Array(0), limits), {
      status: 422,
      type: 'file.empty',
      field: 'image',
    });
  });

  test('a file over imageMaxBytes is rejected with 413 before it is parsed', async () => {
    const justOver = new Uint8Array(limits.imageMaxBytes + 1); // all zeros: would be 415 if it were sniffed
    await expectMediaError(inspectImage(justOver, limits), { status: 413, type: 'file.too_large', field: 'image' });
    const small = { ...limits, imageMaxBytes: 1000 };
    const error = await expectMediaError(inspectImage(fixtures.portraitPng(), small), {
      status: 413,
      type: 'file.too_large',
      field: 'image',
    });
    expect(error.message).toContain('1000 bytes');
  });
});

describe('type is judged from the bytes', () => {
  const unsupported = { status: 415, type: 'media.unsupported_type', field: 'image' } as const;

  test('GIF is rejected with 415', async () => {
    const error = await expectMediaError(inspectImage(await fixtures.gif(), limits), unsupported);
    expect(error.message).toContain('GIF');
  });

  test('PDF is rejected with 415', async () => {
    await expectMediaError(inspectImage(fixtures.pdf(), limits), unsupported);
  });

  test('a text file is rejected with 415', async () => {
    await expectMediaError(inspectImage(fixtures.textFile(), limits), unsupported);
  });

  test('audio uploaded as the image is rejected with 415', async () => {
    await expectMediaError(inspectImage(fixtures.wav({ seconds: 3 }), limits), unsupported);
    await expectMediaError(inspectImage(await fixtures.mp3({ seconds: 3 }), limits), unsupported);
  });
});

describe('decoding rules', () => {
  const undecodable = { status: 422, type: 'image.undecodable', field: 'image' } as const;

  test('a polyglot (JPEG magic, then PDF/ZIP/HTML) is rejected with 422 image.undecodable', async () => {
    await expectMediaError(inspectImage(fixtures.polyglot(), limits), undecodable);
  });

  test('truncated JPEG, PNG and WebP are rejected with 422 image.undecodable', async () => {
    const images = [
      await fixtures.portraitJpeg({ width: 800, height: 1200 }),
      fixtures.portraitPng(),
      await fixtures.portraitWebp(),
    ];
    for (const bytes of images) {
      await expectMediaError(inspectImage(fixtures.truncated(bytes, 0.6), limits), undecodable);
    }
  });

  test('a decompression bomb (20000×20000 PNG of a few dozen KB) is rejected from its header with 422 image.too_many_pixels', async () => {
    const bomb = fixtures.pngBomb();
    expect(bomb.byteLength).toBeLessThan(64 * 1024);
    const started = performance.now();
    const error = await expectMediaError(inspectImage(bomb, limits), {
      status: 422,
      type: 'image.too_many_pixels',
      field: 'image',
    });
    expect(error.message).toContain('20000×20000');
    // Decoding 400 Mpx would take seconds and ~400 MB; reading the header takes milliseconds.
    expect(performance.now() - started).toBeLessThan(2000);
  });

  test('an image whose short side is below imageMinShortSide is rejected with 422 image.too_small', async () => {
    await expectMediaError(inspectImage(await fixtures.tinyPng(100, 100), limits), {
      status: 422,
      type: 'image.too_small',
      field: 'image',
    });
    // Long but narrow is still too small.
    await expectMediaError(inspectImage(await fixtures.tinyPng(2000, 255), limits), {
      status: 422,
      type: 'image.too_small',
      field: 'image',
    });
    const exactlyMinimum = await inspectImage(await fixtures.tinyPng(256, 300), limits);
    expect(exactlyMinimum.width).toBe(256);
  });

  test('the short side is judged after EXIF rotation', async () => {
    // Stored 300×240 but shown 240×300 or vice versa: either way the short side is 240 < 256.
    const bytes = await fixtures.portraitJpeg({ width: 240, height: 300, exifOrientation: 8 });
    await expectMediaError(inspectImage(bytes, limits), { status: 422, type: 'image.too_small', field: 'image' });
  });

  test('an animated WebP or APNG is rejected with 422 image.animated', async () => {
    for (const bytes of [await fixtures.animatedWebp(), await fixtures.animatedPng()]) {
      await expectMediaError(inspectImage(bytes, limits), { status: 422, type: 'image.animated', field: 'image' });
    }
  });
});

function meanAbsoluteDifference(a: InspectedImage, b: InspectedImage): number {
  expect(a.pixels.data.byteLength).toBe(b.pixels.data.byteLength);
  let sum = 0;
  for (let i = 0; i < a.pixels.data.length; i++) sum += Math.abs(a.pixels.data[i]! - b.pixels.data[i]!);
  return sum / a.pixels.data.length;
}
