import { describe, expect, test } from 'bun:test';
import { defaultUploadBounds, MediaError } from '../../src/media/index.ts';

describe('defaultUploadBounds', () => {
  test('match the product rules', () => {
    expect(defaultUploadBounds).toMatchObject({
      imageMaxBytes: 10 * 1024 * 1024,
      audioMaxBytes: 25 * 1024 * 1024,
      imageMinShortSide: 256,
      imageMaxPixels: 40_000_000,
      audioMaxSeconds: 120,
      audioMinSeconds: 3,
      ffmpegTimeoutMs: 20_000,
    });
  });

  test('ffmpegPath is Debian’s maintained ffmpeg (the bootstrap installs it), with the MP3 and AAC support fixtures need', async () => {
    expect(defaultUploadBounds.ffmpegPath).toBe('/usr/bin/ffmpeg');
    const version = Bun.spawnSync([defaultUploadBounds.ffmpegPath, '-version']).stdout.toString();
    // Not the 2018 static build (4.1) it replaced: a distribution's, five or later.
    expect(Number(/ffmpeg version (?:\d+:)?(\d+)\./.exec(version)?.[1])).toBeGreaterThanOrEqual(5);
    expect(version).toContain('deb');
    const proc = Bun.spawn([defaultUploadBounds.ffmpegPath, '-hide_banner', '-encoders'], {
      stdout: 'pipe',
      stderr: 'ignore',
    });
    const encoders = await new Response(proc.stdout).text();
    expect(await proc.exited).toBe(0);
    expect(encoders).toContain('libmp3lame');
    expect(encoders).toMatch(/ aac /);
  });
});

describe('MediaError', () => {
  test('carries status, field, type and a human message', () => {
    const error = new MediaError(415, 'audio', 'Not audio.', 'media.unsupported_type');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('MediaError');
    expect({ status: error.status, field: error.field, type: error.type, message: error.message }).toEqual({
      status: 415,
      field: 'audio',
      type: 'media.unsupported_type',
      message: 'Not audio.',
    });
  });
});
