/**
 * Decide what an upload is from its bytes alone. The client's Content-Type and
 * file name are never consulted: they are trivially forged. Sniffing only
 * looks at headers, so a file that passes here must still decode (image.ts,
 * audio.ts) before it is accepted; that is what stops polyglots.
 */
import { type FileTypeResult, fileTypeFromBuffer } from 'file-type';
import { MediaError, type MediaField } from './errors.ts';
import { isobmffHasAudioTrack } from './isobmff.ts';

export type ImageKind = 'image/jpeg' | 'image/png' | 'image/webp';
export type AudioKind = 'audio/wav' | 'audio/mpeg' | 'audio/mp4';

export interface SniffedImage {
  kind: ImageKind;
  /** APNG is only visible to file-type; animated WebP is caught from the decoder's page count. */
  animated: boolean;
}

/** file-type results that are ISO base media files (ftyp box) and may hold audio. */
const ISOBMFF_MIMES = new Set([
  'audio/mp4',
  'audio/x-m4a',
  'video/mp4',
  'video/x-m4v',
  'video/quicktime',
  'video/3gpp',
  'video/3gpp2',
]);

export async function sniffImage(bytes: Uint8Array): Promise<SniffedImage> {
  const detected = await fileTypeFromBuffer(bytes);
  switch (detected?.mime) {
    case 'image/jpeg':
      return { kind: 'image/jpeg', animated: false };
    case 'image/png':
      return { kind: 'image/png', animated: false };
    case 'image/apng':
      return { kind: 'image/png', animated: true };
    case 'image/webp':
      return { kind: 'image/webp', animated: false };
  }
  throw unsupportedType('image', 'a JPEG, PNG or WebP image', detected);
}

export async function sniffAudio(bytes: Uint8Array): Promise<AudioKind> {
  const detected = await fileTypeFromBuffer(bytes);
  if (detected?.mime === 'audio/wav') return 'audio/wav';
  // file-type reports MPEG-1/2 layers I–III all as audio/mpeg; ffmpeg's mp3 demuxer reads all three.
  if (detected?.mime === 'audio/mpeg') return 'audio/mpeg';
  if (detected && ISOBMFF_MIMES.has(detected.mime) && hasFtypBox(bytes)) {
    if (isobmffHasAudioTrack(bytes) === 'no') {
      throw new MediaError(
        415,
        'audio',
        'This MP4 file has no audio track. Upload a WAV, MP3 or M4A recording of your voice.',
        'media.unsupported_type',
      );
    }
    return 'audio/mp4';
  }
  // file-type gives up on an ID3 tag followed by padding or an unframed start;
  // that is still an MP3 candidate, and the decoder has the final word.
  if (!detected && startsWithId3Tag(bytes)) return 'audio/mpeg';
  throw unsupportedType('audio', 'a WAV, MP3 or M4A file', detected);
}

function hasFtypBox(bytes: Uint8Array): boolean {
  return bytes.byteLength >= 12 && asciiAt(bytes, 4, 4) === 'ftyp';
}

function startsWithId3Tag(bytes: Uint8Array): boolean {
  return bytes.byteLength >= 10 && asciiAt(bytes, 0, 3) === 'ID3';
}

function asciiAt(bytes: Uint8Array, offset: number, length: number): string {
  return String.fromCharCode(...bytes.subarray(offset, offset + length));
}

function unsupportedType(field: MediaField, expected: string, detected: FileTypeResult | undefined): MediaError {
  const found = detected
    ? `this file is ${detected.ext.toUpperCase()} (${detected.mime})`
    : "this file's format was not recognised";
  return new MediaError(415, field, `The ${field} must be ${expected}; ${found}.`, 'media.unsupported_type');
}
