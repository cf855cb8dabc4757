// ffmpeg meets untrusted bytes (issue 16): it runs with an empty environment (none of the
// service's secrets), in the upload's own temporary folder, under limits on CPU time, memory
// and files it may write; and uploads that are really playlists or scripts that reference
// other files (HLS, ffconcat) are refused before it sees them.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { inspectAudio } from '../../src/media/audio.ts';
import { MediaError } from '../../src/media/index.ts';
import { defaultUploadBounds } from '../../src/media/upload-bounds.ts';
import * as fixtures from '../fixtures/index.ts';

describe('the decoder’s sandbox', () => {
  // Stands in for ffmpeg: reports its environment, folder and limits on stderr (it may write
  // no file), then fails; the report comes back in the decoding error's cause.
  const reportingFfmpeg = fixtures.writeTempFile(
    `reporting-ffmpeg-${process.pid}.sh`,
    `#!/bin/sh\n{ echo "ENV:$(env | cut -d= -f1 | tr '\\n' ' ')"; echo "CWD:$(pwd)"; echo "ARGS:$*"; cat /proc/self/limits; } >&2\nexit 1\n`,
    0o755,
  );
  let saved: string | undefined;
  beforeAll(() => {
    saved = process.env.DATABASE_URL;
    process.env.DATABASE_URL = 'postgres://secret@db/likeness';
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = saved;
  });

  test('an empty environment, a temporary folder, and limits on CPU, memory and written files', async () => {
    const error = (await inspectAudio(fixtures.wav({ seconds: 3 }), {
      ...defaultUploadBounds,
      ffmpegPath: reportingFfmpeg,
      ffmpegTimeoutMs: 20_000,
    }).catch((e: unknown) => e)) as MediaError;
    const report = String((error.cause as Error).message);
    const names = /ENV:(.*)/.exec(report)![1]!.trim().split(' ').filter(Boolean);
    expect(names).not.toContain('DATABASE_URL');
    expect(names.filter((name) => !['PWD', 'SHLVL', '_', 'OLDPWD'].includes(name))).toEqual([]);
    expect(/CWD:(.*)/.exec(report)![1]).toContain('likeness-audio-');
    const limit = (name: string) => new RegExp(`^${name}\\s+(\\S+)`, 'm').exec(report)?.[1];
    expect(limit('Max cpu time')).toBe('20');
    expect(limit('Max address space')).toBe(String(1024 * 1024 * 1024));
    expect(limit('Max file size')).toBe('0');
    expect(limit('Max open files')).toBe('64');
  });

  test('an MP4 is opened with external data references (`dref`) off: a track cannot pull in another file', async () => {
    const m4a = await fixtures.m4a({ seconds: 3 });
    const error = (await inspectAudio(m4a, {
      ...defaultUploadBounds,
      ffmpegPath: reportingFfmpeg,
      ffmpegTimeoutMs: 20_000,
    }).catch((e: unknown) => e)) as MediaError;
    const args = /ARGS:(.*)/.exec(String((error.cause as Error).message))![1]!;
    expect(args).toContain('-f mov -enable_drefs 0 -use_absolute_path 0 -i ');
  });

  test('a decompression bomb that needs more than the memory limit fails as undecodable, not the service', async () => {
    // A WAV header claiming a huge sample rate and channels is read by ffmpeg and refused; the
    // real check is that a decoder error stays a 422.
    const bytes = fixtures.wav({ seconds: 3 });
    new DataView(bytes.buffer, bytes.byteOffset).setUint16(22, 65_535, true); // channels
    const error = await inspectAudio(bytes, defaultUploadBounds).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MediaError);
    expect((error as MediaError).status).toBeOneOf([415, 422]);
  });
});

describe('references in disguise', () => {
  const refused = async (bytes: Uint8Array) => {
    const error = await inspectAudio(bytes, defaultUploadBounds).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MediaError);
    return error as MediaError;
  };

  test('an HLS playlist pointing at local files is not audio (415)', async () => {
    const playlist = new TextEncoder().encode(
      '#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\nfile:///etc/passwd\n#EXT-X-ENDLIST\n',
    );
    expect((await refused(playlist)).status).toBe(415);
  });

  test('an ffconcat script, or one behind an ID3 tag, is refused before or by the forced MP3 demuxer', async () => {
    const script = new TextEncoder().encode("ffconcat version 1.0\nfile '/etc/passwd'\n");
    expect((await refused(script)).status).toBe(415);
    // Behind an ID3 tag it passes the sniff as an MP3 candidate; the mp3 demuxer is forced,
    // so ffmpeg reads it as MP3 frames (none) and never as a script.
    const id3 = new Uint8Array([0x49, 0x44, 0x33, 3, 0, 0, 0, 0, 0, 0]);
    const disguised = new Uint8Array([...id3, ...script, ...new Uint8Array(4096)]);
    const error = await refused(disguised);
    expect(error.status).toBe(422);
    expect(error.type).toBe('audio.undecodable');
  });
});
