// Renderers draw the avatar's frames. The stand-in (the portrait, breathing) serves until
// the talking-head renderer replaces it behind the same interface.
import type { AvatarRenderer, AvatarRendererOptions } from './renderer.ts';
import { StandinRenderer } from './standin/index.ts';

export * from './renderer.ts';

export function createAvatarRenderer(options: AvatarRendererOptions): AvatarRenderer {
  return new StandinRenderer(options);
}
