// The avatar's video and audio as both processes see them: the control plane picks the shape
// per session and announces sizes in GET /v1/pipelines; the agent renders and publishes them.

/** `form_factor` of POST /v1/sessions/start (docs/api.md#sessions-start). */
export const FORM_FACTORS = ['phone', 'desktop'] as const;
export type FormFactor = (typeof FORM_FACTORS)[number];

export const AVATAR_SHAPES = ['portrait', 'landscape'] as const;
export type AvatarShape = (typeof AVATAR_SHAPES)[number];

/**
 * The one shape rule: portrait for phones and when the client does not say; landscape for
 * desktops where landscape video is enabled (AVATAR_LANDSCAPE), otherwise portrait.
 */
export function avatarShapeFor(formFactor: FormFactor | null | undefined, landscapeVideo: boolean): AvatarShape {
  return formFactor === 'desktop' && landscapeVideo ? 'landscape' : 'portrait';
}

export const AVATAR_FPS = 25;

/**
 * The codecs the avatar's video may be published in (AVATAR_VIDEO_CODEC). H.264 first: at
 * 540×960 and 25 fps libwebrtc's OpenH264 encoder takes half the CPU of its VP8 one (3.5 % of
 * a core against 7–8 %, bench/renderer), and every browser decodes it (Safari in hardware).
 */
export const AVATAR_VIDEO_CODECS = ['h264', 'vp8'] as const;
export type AvatarVideoCodec = (typeof AVATAR_VIDEO_CODECS)[number];

export interface FrameSize {
  width: number;
  height: number;
}

/** The built-in frame sizes per shape. */
export const AVATAR_FRAME_SIZES: Readonly<Record<AvatarShape, FrameSize>> = {
  portrait: { width: 540, height: 960 },
  landscape: { width: 960, height: 540 },
};

export function avatarFrameSize(shape: AvatarShape): FrameSize {
  return { ...AVATAR_FRAME_SIZES[shape] };
}

/** The avatar's published audio (mono), and the rate an avatar service receives speech at. */
export const AVATAR_SAMPLE_RATE = 48_000;
