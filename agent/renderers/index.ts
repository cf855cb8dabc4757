// Renderers draw the avatar into the room. The stand-in (a still portrait with a slowly
// varying brightness) serves until the talking-head renderer replaces it behind the same
// interface.
import type { AvatarRenderer, AvatarRendererOptions } from './renderer.ts';
import { StandinRenderer } from './standin/index.ts';

export * from './renderer.ts';

export function createAvatarRenderer(options: AvatarRendererOptions): AvatarRenderer {
  return new StandinRenderer(options);
}
