import { describe, expect, test } from 'bun:test';
import { readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { defaultUploadBounds, inspectAudio, MediaError } from '../../src/media/index.ts';
import type { AudioKind } from '../../src/media/sniff.ts';
import * as fixtures from '../fixtures/index.ts';
import { expectMediaError } from './expect-media-error.ts';

const limits = defaultUploadBounds;

/** `bytes` inspect as audio of `kind`, `seconds` long to within `tolerance`. */
async function expectAudio(bytes: Uint8Array, kind: AudioKind, seconds: number, tolerance = 0.1): Promise<void> {
  const audio = await inspectAudio(bytes, limits);
  expect(audio.kind).toBe(kind);
  expect(Math.abs(audio.durationSeconds - seconds)).toBeLessThan(tolerance);
}

describe('inspectAudio measures real recordings by decoding', () => {
  test('a 30 s WAV measures 30 s and yields 16 kHz mono samples', async () => {
    const audio = await inspectAudio(fixtures.wav({ seconds: 30 }), limits);
    expect(audio.kind).toBe('audio/wav');
    expect(audio.durationSeconds).toBe(30);
    expect(audio.pcm16kMono).toBeInstanceOf(Int16Array);
    expect(audio.pcm16kMono.length).toBe(30 * 16_000);
    // The signal survived decoding: not silence.
    expect(audio.pcm16kMono.reduce((peak, sample) => Math.max(peak, Math.abs(sample)), 0)).toBeGreaterThan(3000);
  });

  test('a 44.1 kHz WAV is resampled to 16 kHz', async () => {
    const audio = await inspectAudio(fixtures.wav({ seconds: 10, sampleRate: 44_100 }), limits);
    expect(audio.durationSeconds).toBeCloseTo(10, 2);
  });

  test('a 30 s MP3 measures 30 ± 0.1 s', async () => {
    await expectAudio(await fixtures.mp3({ seconds: 30 }), 'audio/mpeg', 30);
  });

  test('an MP3 without an ID3 tag (bare frame sync) is recognised', async () => {
    await expectAudio(await fixtures.mp3({ seconds: 10, id3: false }), 'audio/mpeg', 10);
  });

  test('an MP3 whose ID3 tag is followed by padding (file-type misses it) is recognised', async () => {
    await expectAudio(await fixtures.mp3WithPaddedId3({ seconds: 10 }), 'audio/mpeg', 10, 0.2);
  });

  test('a 30 s M4A (AAC, moov at the end) measures 30 ± 0.1 s', async () => {
    await expectAudio(await fixtures.m4a({ seconds: 30 }), 'audio/mp4', 30);
  });

  test('an MP4 video with an audio track is accepted for its audio', async () => {
    await expectAudio(await fixtures.mp4WithAudio({ seconds: 5 }), 'audio/mp4', 5);
  });
});

describe('size rules', () => {
  test('an empty file is rejected with 422 file.empty', async () => {
    await expectMediaError(inspectAudio(new Uint8Array(0), limits), {
      status: 422,
      type: 'file.empty',
      field: 'audio',
    });
  });

  test('a file over audioMaxBytes is rejected with 413 before it is parsed', async () => {
    await expectMediaError(inspectAudio(new Uint8Array(limits.audioMaxBytes + 1), limits), {
      status: 413,
      type: 'file.too_large',
      field: 'audio',
    });
    await expectMediaError(inspectAudio(fixtures.wav({ seconds: 5 }), { ...limits, audioMaxBytes: 10_000 }), {
      status: 413,
      type: 'file.too_large',
      field: 'audio',
    });
  });
});

describe('type is judged from the bytes', () => {
  const unsupported = { status: 415, type: 'media.unsupported_type', field: 'audio' } as const;

  test('a PNG uploaded as audio is rejected with 415', async () => {
    const error = await expectMediaError(inspectAudio(fixtures.portraitPng(), limits), unsupported);
    expect(error.message).toContain('PNG');
  });

  test('text, PDF and GIF are rejected with 415', async () => {
    await expectMediaError(inspectAudio(fixtures.textFile(), limits), unsupported);
    await expectMediaError(inspectAudio(fixtures.pdf(), limits), unsupported);
    await expectMediaError(inspectAudio(await fixtures.gif(), limits), unsupported);
  });

  test('real audio in a format outside WAV/MP3/MP4 (FLAC) is rejected with 415', async () => {
    await expectMediaError(inspectAudio(await fixtures.flac({ seconds: 5 }), limits), unsupported);
  });

  test('an MP4 with no audio stream is rejected with 415', async () => {
    const error = await expectMediaError(inspectAudio(await fixtures.mp4VideoOnly(), limits), unsupported);
    expect(error.message).toContain('no audio track');
  });

  test('a WAV holding a codec outside the decoder allow-list is rejected with 415', async () => {
    await expectMediaError(inspectAudio(await fixtures.wavWithUnsupportedCodec({ seconds: 5 }), limits), unsupported);
  });
});

describe('duration rules', () => {
  test('a WAV whose header claims 10 s but holds 121 s is measured as ~121 s and rejected with 422 audio.too_long', async () => {
    const lyingWav = fixtures.wav({ seconds: 121, claimSeconds: 10 });
    await expectMediaError(inspectAudio(lyingWav, limits), { status: 422, type: 'audio.too_long', field: 'audio' });
    const measured = await inspectAudio(lyingWav, { ...limits, audioMaxSeconds: 200 });
    expect(Math.abs(measured.durationSeconds - 121)).toBeLessThan(0.05);
  });

  test('longer than audioMaxSeconds is rejected with 422 audio.too_long', async () => {
    const fiveSeconds = { ...limits, audioMaxSeconds: 5, audioMinSeconds: 1 };
    const error = await expectMediaError(inspectAudio(await fixtures.mp3({ seconds: 30 }), fiveSeconds), {
      status: 422,
      type: 'audio.too_long',
      field: 'audio',
    });
    expect(error.message).toContain('5 seconds');
  });

  test('ffmpeg decodes at most max + 1 s, reads WAVs to their real end, and never guesses the format', async () => {
    // Prints its arguments on stderr (ffmpeg may write no file), which come back in the error's cause.
    const recordingFfmpeg = fixtures.writeTempFile(
      `recording-ffmpeg-${process.pid}.sh`,
      `#!/bin/sh\nprintf '%s\\n' "$@" >&2\nexit 1\n`,
      0o755,
    );
    const withRecorder = { ...limits, ffmpegPath: recordingFfmpeg };
    const argsFor = async (bytes: Uint8Array) => {
      const error = (await inspectAudio(bytes, withRecorder).catch((e: unknown) => e)) as MediaError;
      return String((error.cause as Error).message)
        .replace(/^ffmpeg exited \d+: /, '')
        .trim()
        .split('\n')
        .join(' ');
    };

    try {
      const wavArgs = await argsFor(fixtures.wav({ seconds: 3 }));
      expect(wavArgs).toContain('-f wav -ignore_length 1 -i ');
      expect(wavArgs).toContain(`-t ${limits.audioMaxSeconds + 1} `);
      expect(wavArgs).toContain('-ac 1 -ar 16000 -f s16le');
      expect(await argsFor(await fixtures.mp3({ seconds: 3 }))).toContain('-f mp3 -i ');
      const mp4Args = await argsFor(await fixtures.m4a({ seconds: 3 }));
      expect(mp4Args).toContain('-f mov -enable_drefs 0 -use_absolute_path 0 -i ');
      expect(mp4Args).not.toContain('ignore_length');
    } finally {
      rmSync(recordingFfmpeg, { force: true });
    }
  });

  test('shorter than audioMinSeconds is rejected with 422 audio.too_short', async () => {
    const error = await expectMediaError(inspectAudio(fixtures.wav({ seconds: 2 }), limits), {
      status: 422,
      type: 'audio.too_short',
      field: 'audio',
    });
    expect(error.message).toContain('2.0 seconds');
    const exactlyMinimum = await inspectAudio(fixtures.wav({ seconds: 3 }), limits);
    expect(exactlyMinimum.durationSeconds).toBe(3);
  });
});

describe('decoding rules', () => {
  const undecodable = { status: 422, type: 'audio.undecodable', field: 'audio' } as const;

  test('a RIFF/WAVE header with an invalid fmt chunk and random data is rejected with 422 audio.undecodable', async () => {
    await expectMediaError(inspectAudio(fixtures.wavGarbage(), limits), undecodable);
  });

  test('an ID3 tag followed by random bytes is rejected with 422 audio.undecodable', async () => {
    await expectMediaError(inspectAudio(fixtures.id3Garbage(), limits), undecodable);
  });

  test('an M4A truncated before its moov box is rejected with 422 audio.undecodable', async () => {
    await expectMediaError(
      inspectAudio(fixtures.truncated(await fixtures.m4a({ seconds: 30 }), 0.5), limits),
      undecodable,
    );
  });

  test('a WAV header with no samples is rejected with 422 audio.undecodable', async () => {
    await expectMediaError(inspectAudio(fixtures.wav({ seconds: 0 }), limits), undecodable);
  });

  test('a truncated MP3 decodes to the audio that is there (and is then judged on that length)', async () => {
    const half = await inspectAudio(fixtures.truncated(await fixtures.mp3({ seconds: 30 }), 0.5), limits);
    expect(Math.abs(half.durationSeconds - 15)).toBeLessThan(0.5);
  });

  test('ffmpeg is killed after ffmpegTimeoutMs and the upload rejected with 422 audio.undecodable', async () => {
    const hangingFfmpeg = fixtures.writeTempFile(
      `hanging-ffmpeg-${process.pid}.sh`,
      '#!/bin/sh\nexec sleep 30\n',
      0o755,
    );
    try {
      const started = performance.now();
      const error = await expectMediaError(
        inspectAudio(fixtures.wav({ seconds: 5 }), { ...limits, ffmpegPath: hangingFfmpeg, ffmpegTimeoutMs: 300 }),
        undecodable,
      );
      expect(error.message).toContain('too long to decode');
      expect(performance.now() - started).toBeLessThan(5000);
    } finally {
      rmSync(hangingFfmpeg, { force: true });
    }
  });

  test('a missing ffmpeg binary is a server fault, not a MediaError', async () => {
    const error = await inspectAudio(fixtures.wav({ seconds: 5 }), {
      ...limits,
      ffmpegPath: '/nonexistent/ffmpeg',
    }).catch((error: unknown) => error);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(MediaError);
  });

  test('temp files are removed after success and failure', async () => {
    const tempDirs = () => readdirSync(tmpdir()).filter((name) => name.startsWith('likeness-audio-')).length;
    const before = tempDirs();
    await inspectAudio(fixtures.wav({ seconds: 3 }), limits);
    await inspectAudio(fixtures.wavGarbage(), limits).catch(() => {});
    await inspectAudio(fixtures.wav({ seconds: 3 }), { ...limits, ffmpegPath: '/nonexistent/ffmpeg' }).catch(() => {});
    expect(tempDirs()).toBe(before);
  });
});
