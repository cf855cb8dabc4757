// An identity's uploads (a photo, a voice sample) read and inspected before anything is stored
// or charged; a problem is the API's error (asApiError: 413, 415, 422).
import { type InspectedImage, inspectAudio, inspectImage, type UploadBounds } from '../media/index.ts';
import type { Pipeline } from '../pipelines/index.ts';
import { sampleProfile } from '../voices/index.ts';
import type { UploadedAudio } from './onboarding.ts';
import { asApiError } from './validation.ts';

/** `onImage`: called with the inspected photo before the audio is decoded, so work on it can overlap. */
export async function inspectUploads(
  bounds: UploadBounds,
  image?: File,
  audio?: File,
  onImage?: (image: InspectedImage) => void,
) {
  try {
    const imageBytes = image && new Uint8Array(await image.arrayBuffer());
    const audioBytes = audio && new Uint8Array(await audio.arrayBuffer());
    const inspectedImage = imageBytes && (await inspectImage(imageBytes, bounds));
    if (inspectedImage) onImage?.(inspectedImage);
    const inspectedAudio = audioBytes && (await inspectAudio(audioBytes, bounds));
    const uploadedAudio: UploadedAudio | undefined = audioBytes &&
      inspectedAudio && { bytes: audioBytes, inspected: inspectedAudio, profile: sampleProfile(inspectedAudio) };
    return {
      image: imageBytes && inspectedImage && { bytes: imageBytes, inspected: inspectedImage },
      audio: uploadedAudio,
    };
  } catch (error) {
    throw asApiError(error);
  }
}

/** The pipeline's own requirements on the photo (e.g. a face), before anything is stored or charged. */
export async function checkImageFor(pipeline: Pipeline, image: InspectedImage): Promise<void> {
  try {
    await pipeline.checkImage?.(image);
  } catch (error) {
    throw asApiError(error);
  }
}
