/**
 * Validation of uploaded reference media for an avatar identity: a portrait
 * image and a voice sample. Every rejection is a MediaError carrying the HTTP
 * status, the form field and a machine-readable type.
 */
export { MediaError, type MediaErrorStatus, type MediaErrorType, type MediaField } from './errors.ts';
export { defaultMediaLimits, resolveFfmpegPath, DEFAULT_FFMPEG_TIMEOUT_MS, type MediaLimits } from './limits.ts';
export { sniffImage, sniffAudio, type ImageKind, type AudioKind, type SniffedImage } from './sniff.ts';
export { inspectImage, renderImageVariants, type InspectedImage, type ImageVariants } from './image.ts';
export { inspectAudio, PCM_SAMPLE_RATE, type InspectedAudio } from './audio.ts';
