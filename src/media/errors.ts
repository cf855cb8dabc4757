/**
 * The one error type media validation throws for bad uploads. `status` is the
 * HTTP status to answer with, `field` names the form field that was wrong,
 * `type` is a stable machine code clients can switch on, and `message` is
 * meant to be shown to the person who uploaded the file.
 */

export type MediaField = 'image' | 'audio';

export type MediaErrorStatus = 413 | 415 | 422;

export type MediaErrorType =
  | 'file.empty'
  | 'file.too_large'
  | 'media.unsupported_type'
  | 'image.undecodable'
  | 'image.too_small'
  | 'image.too_many_pixels'
  | 'image.animated'
  | 'image.no_face'
  | 'image.face_too_small'
  | 'audio.undecodable'
  | 'audio.too_short'
  | 'audio.too_long'
  | 'audio.no_speech';

export class MediaError extends Error {
  constructor(
    public status: MediaErrorStatus,
    public field: MediaField,
    message: string,
    public type: MediaErrorType,
    /** The decoder's own error, for logs; never shown to the uploader. */
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'MediaError';
  }
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${+(bytes / (1024 * 1024)).toFixed(1)} MB`;
  if (bytes >= 1024) return `${+(bytes / 1024).toFixed(1)} KB`;
  return `${bytes} bytes`;
}
