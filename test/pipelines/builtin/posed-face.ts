// A framed face rigged and warped as the agent's renderer does it: its still frame (I420), and a
// frame drawn at the neutral pose but for the parts a test moves (gaze, brows, mouth).
import { VideoBufferType, VideoFrame } from '@livekit/rtc-node';
import { NEUTRAL_POSE } from '../../../agent/pipelines/builtin/pose.ts';
import { FaceWarp, i420Length } from '../../../agent/pipelines/builtin/warp.ts';
import { buildFaceRig, type FaceRigInput } from '../../../src/pipelines/builtin/face-rig.ts';

export function posedFace(framing: FaceRigInput) {
  const { rig, textures } = buildFaceRig(framing);
  const base = new VideoFrame(framing.rgba, framing.width, framing.height, VideoBufferType.RGBA).convert(
    VideoBufferType.I420,
  ).data;
  const warp = new FaceWarp(rig, new Uint8Array(base), textures.mouth);
  const draw = (pose: Partial<typeof NEUTRAL_POSE>) => {
    const out = new Uint8Array(i420Length(framing.width, framing.height));
    warp.paintBase(out);
    warp.render({ ...NEUTRAL_POSE, ...pose }, out);
    return out;
  };
  return { rig, textures, base, draw };
}
