import { describe, expect, test } from 'bun:test';
import sharp from 'sharp';
import { defaultUploadBounds, inspectImage, renderImageVariants } from '../../src/media/index.ts';
import * as fixtures from '../fixtures/index.ts';

const limits = defaultUploadBounds;
const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47];
const JPEG_MAGIC = [0xff, 0xd8, 0xff];

function startsWith(bytes: Uint8Array, magic: number[]): boolean {
  return magic.every((byte, i) => bytes[i] === byte);
}

/** EXIF "GPSInfo" IFD pointer tag (0x8825), in either byte order. */
function hasGpsPointer(exif: Buffer): boolean {
  return exif.includes(Buffer.from([0x88, 0x25])) || exif.includes(Buffer.from([0x25, 0x88]));
}

describe('renderImageVariants', () => {
  test('normalized is an upright JPEG with ALL metadata (EXIF, GPS, orientation) stripped', async () => {
    const upload = await fixtures.portraitJpeg({ width: 1280, height: 1920, exifOrientation: 6, withGpsExif: true });
    const uploadMeta = await sharp(upload).metadata();
    expect(uploadMeta.exif?.toString('latin1')).toContain('LikenessTestCam');
    expect(hasGpsPointer(uploadMeta.exif!)).toBe(true);

    const { normalized } = await renderImageVariants(await inspectImage(upload, limits));
    expect(normalized).toMatchObject({ contentType: 'image/jpeg', ext: 'jpg', width: 1280, height: 1920 });
    expect(startsWith(normalized.bytes, JPEG_MAGIC)).toBe(true);
    const meta = await sharp(normalized.bytes).metadata();
    expect({ width: meta.width, height: meta.height }).toEqual({ width: 1280, height: 1920 });
    expect(meta.exif).toBeUndefined();
    expect(meta.orientation).toBeUndefined();
    expect(meta.xmp).toBeUndefined();
    expect(meta.iptc).toBeUndefined();
    expect(meta.icc).toBeUndefined();
  });

  test('normalized is PNG when the image has real transparency', async () => {
    const { normalized } = await renderImageVariants(await inspectImage(await fixtures.portraitPngWithAlpha(), limits));
    expect(normalized).toMatchObject({ contentType: 'image/png', ext: 'png', width: 512, height: 512 });
    expect(startsWith(normalized.bytes, PNG_MAGIC)).toBe(true);
    expect((await sharp(normalized.bytes).metadata()).hasAlpha).toBe(true);
  });

  test('an opaque PNG upload is normalized to JPEG', async () => {
    const { normalized } = await renderImageVariants(await inspectImage(fixtures.portraitPng(), limits));
    expect(normalized.contentType).toBe('image/jpeg');
  });

  test('normalized is capped at 4096 px on the long side, render at 1024 px', async () => {
    const image = await inspectImage(await fixtures.portraitJpeg({ width: 5000, height: 3000 }), limits);
    const { normalized, render } = await renderImageVariants(image);
    expect({ width: normalized.width, height: normalized.height }).toEqual({ width: 4096, height: 2458 });
    expect({ width: render.width, height: render.height }).toEqual({ width: 1024, height: 614 });
    const renderMeta = await sharp(render.bytes).metadata();
    expect({ format: renderMeta.format, width: renderMeta.width, height: renderMeta.height }).toEqual({
      format: 'png',
      width: 1024,
      height: 614,
    });
  });

  test('render is a PNG, upright, and never upscaled', async () => {
    const small = await renderImageVariants(await inspectImage(fixtures.portraitPng(), limits));
    expect({ width: small.render.width, height: small.render.height }).toEqual({ width: 512, height: 512 });
    expect({ width: small.normalized.width, height: small.normalized.height }).toEqual({ width: 512, height: 512 });
    expect(startsWith(small.render.bytes, PNG_MAGIC)).toBe(true);

    const rotated = await renderImageVariants(
      await inspectImage(await fixtures.portraitJpeg({ width: 1280, height: 1920, exifOrientation: 6 }), limits),
    );
    expect({ width: rotated.render.width, height: rotated.render.height }).toEqual({ width: 683, height: 1024 });
    expect((await sharp(rotated.render.bytes).metadata()).exif).toBeUndefined();
  });

  test('variants look like the upload', async () => {
    const upload = await fixtures.portraitJpeg({ width: 1280, height: 1920, exifOrientation: 6 });
    const { render } = await renderImageVariants(await inspectImage(upload, limits));
    const expected = await sharp(upload).autoOrient().resize(683, 1024, { fit: 'fill' }).removeAlpha().raw().toBuffer();
    const actual = await sharp(render.bytes).removeAlpha().raw().toBuffer();
    let difference = 0;
    for (let i = 0; i < actual.length; i++) difference += Math.abs(actual[i]! - expected[i]!);
    expect(difference / actual.length).toBeLessThan(3);
  });
});
