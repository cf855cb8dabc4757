import { existsSync } from 'node:fs';
import { formatBytes, MediaError, type MediaField } from './errors.ts';

export interface UploadBounds {
  imageMaxBytes: number;
  audioMaxBytes: number;
  /** Shortest allowed side in pixels, measured after EXIF orientation. */
  imageMinShortSide: number;
  /** Largest allowed width × height; checked from the header, before decoding. */
  imageMaxPixels: number;
  audioMaxSeconds: number;
  audioMinSeconds: number;
  ffmpegPath: string;
  /** ffmpeg is killed after this long; defaults to DEFAULT_FFMPEG_TIMEOUT_MS. */
  ffmpegTimeoutMs?: number;
}

export const DEFAULT_FFMPEG_TIMEOUT_MS = 20_000;

/** Debian's ffmpeg (the bootstrap installs it; security updates keep it current), else `ffmpeg` from PATH. */
export const DEBIAN_FFMPEG = '/usr/bin/ffmpeg';

export function resolveFfmpegPath(): string {
  return existsSync(DEBIAN_FFMPEG) ? DEBIAN_FFMPEG : 'ffmpeg';
}

const MB = 1024 * 1024;

export const defaultUploadBounds: UploadBounds = {
  imageMaxBytes: 10 * MB,
  audioMaxBytes: 25 * MB,
  imageMinShortSide: 256,
  imageMaxPixels: 40_000_000,
  audioMaxSeconds: 120,
  audioMinSeconds: 3,
  ffmpegPath: resolveFfmpegPath(),
  ffmpegTimeoutMs: DEFAULT_FFMPEG_TIMEOUT_MS,
};

/** First gate for every upload: cheap, and runs before any parsing. */
export function assertByteSize(bytes: Uint8Array, field: MediaField, maxBytes: number): void {
  if (bytes.byteLength === 0) {
    throw new MediaError(422, field, `The ${field} file is empty.`, 'file.empty');
  }
  if (bytes.byteLength > maxBytes) {
    throw new MediaError(
      413,
      field,
      `The ${field} file is ${formatBytes(bytes.byteLength)}; the limit is ${formatBytes(maxBytes)}.`,
      'file.too_large',
    );
  }
}
