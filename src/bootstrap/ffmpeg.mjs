// ffmpeg for voice samples (src/media/audio.ts decodes every upload with it): Debian's build,
// kept up to date by the distribution's security updates.
import { ensureDebianPackage } from './debian-packages.mjs';

export const FFMPEG = '/usr/bin/ffmpeg';

/** Installs Debian's ffmpeg when missing; returns the binary's path. */
export function ensureFfmpegInstalled() {
  return ensureDebianPackage({ binary: FFMPEG, pkg: 'ffmpeg', purpose: 'decoding voice samples' });
}
