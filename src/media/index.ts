/**
 * Validation of uploaded reference media for an avatar identity: a portrait
 * image and a voice sample. Every rejection is a MediaError carrying the HTTP
 * status, the form field and a machine-readable type.
 */

export { type InspectedAudio, inspectAudio, PCM_SAMPLE_RATE } from './audio.ts';
export { type ChildEnd, runWithDeadline } from './deadline-run.ts';
export { formatBytes, MediaError, type MediaErrorStatus, type MediaErrorType, type MediaField } from './errors.ts';
export { type ImageVariants, type InspectedImage, inspectImage, renderImageVariants } from './image.ts';
export { type AudioKind, type ImageKind, type SniffedImage, sniffAudio, sniffImage } from './sniff.ts';
export type { StoredAudio, StoredImage } from './stored.ts';
export {
  DEFAULT_FFMPEG_TIMEOUT_MS,
  defaultUploadBounds,
  resolveFfmpegPath,
  type UploadBounds,
} from './upload-bounds.ts';
