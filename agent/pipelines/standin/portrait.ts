// The stand-in's picture: the identity's image fetched, decoded and scaled to cover the
// frame, kept as I420 so each frame only rewrites its luma plane.
import { VideoBufferType, VideoFrame } from '@livekit/rtc-node';
import sharp from 'sharp';
import type { FrameSize } from '../../../src/contract/index.ts';

/** The stored render image is at most 4096 px on its long side; anything far larger is not ours. */
const MAX_IMAGE_BYTES = 25 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 10_000;

export interface I420Picture {
  /** Y plane (width·height bytes), then U and V (each ⌈width/2⌉·⌈height/2⌉ bytes). */
  data: Uint8Array;
  size: FrameSize;
}

export async function fetchPortrait(imageUrl: string, size: FrameSize): Promise<I420Picture> {
  const response = await fetch(imageUrl, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  if (!response.ok) throw new Error(`GET ${imageUrl} answered ${response.status}`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (bytes.byteLength > MAX_IMAGE_BYTES)
    throw new Error(`${imageUrl} is ${bytes.byteLength} bytes, more than ${MAX_IMAGE_BYTES}`);
  const rgba = await sharp(bytes, { limitInputPixels: 40_000_000 })
    .rotate() // EXIF orientation, in case the image was not normalised when stored
    // 'attention' keeps the most salient region (skin tones, detail) when cropping: the face.
    .resize(size.width, size.height, { fit: 'cover', position: sharp.strategy.attention })
    .ensureAlpha()
    .raw()
    .toBuffer();
  const frame = new VideoFrame(
    new Uint8Array(rgba.buffer, rgba.byteOffset, rgba.byteLength),
    size.width,
    size.height,
    VideoBufferType.RGBA,
  );
  return { data: frame.convert(VideoBufferType.I420).data, size };
}

/** A flat dark grey, for sessions without a face to show. */
export function plainPicture(size: FrameSize): I420Picture {
  const lumaBytes = size.width * size.height;
  const data = new Uint8Array(i420Length(size));
  data.fill(72, 0, lumaBytes);
  data.fill(128, lumaBytes); // neutral chroma
  return { data, size };
}

export function i420Length({ width, height }: FrameSize): number {
  return width * height + 2 * Math.ceil(width / 2) * Math.ceil(height / 2);
}
