// A framing (the photo cropped and scaled to the frame size) and its face landmarks: the
// one place the renderer tests get a face from. It is what training makes of a fixture
// photo: real detection (@vladmandic/human, src/pipelines/builtin/face-detection.ts) and the
// training's own framing, so no landmark data is committed.

import { AVATAR_FRAME_SIZES } from '../../../src/contract/index.ts';
import { inspectImage } from '../../../src/media/index.ts';
import { defaultUploadBounds } from '../../../src/media/upload-bounds.ts';
import { findFace } from '../../../src/pipelines/builtin/face-detection.ts';
import type { FaceRigInput } from '../../../src/pipelines/builtin/face-rig.ts';
import { frameFace, opaqueRgba } from '../../../src/pipelines/builtin/framing.ts';
import { cameramanPng, portraitPng, tightHeadshotPng, tiltedSmallPortraitPng } from '../../fixtures/index.ts';

export type Shape = 'portrait' | 'landscape';
export type Photo = 'astronaut' | 'cameraman' | 'astronaut-tilted' | 'headshot';

export const FRAME_SIZES = AVATAR_FRAME_SIZES;

const PHOTOS: Record<Photo, () => Uint8Array | Promise<Uint8Array>> = {
  astronaut: portraitPng,
  cameraman: cameramanPng,
  'astronaut-tilted': tiltedSmallPortraitPng,
  headshot: tightHeadshotPng,
};

const framings = new Map<string, Promise<FaceRigInput>>();

/** A fixture photo's bytes, as uploaded. */
export function photoBytes(photo: Photo): Uint8Array | Promise<Uint8Array> {
  return PHOTOS[photo]();
}

/** A fixture photo framed for `shape` as training frames it, with its 478 landmarks in frame pixels. */
export function faceFraming(photo: Photo, shape: Shape): Promise<FaceRigInput> {
  const key = `${photo}/${shape}`;
  let framing = framings.get(key);
  if (!framing) {
    framing = (async () => {
      const image = await inspectImage(await photoBytes(photo), defaultUploadBounds);
      const framed = await frameFace(image, await findFace(image), shape);
      return { width: framed.width, height: framed.height, rgba: opaqueRgba(framed.rgb), landmarks: framed.landmarks };
    })();
    framings.set(key, framing);
  }
  return framing;
}
