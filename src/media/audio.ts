/**
 * Audio uploads: sniff, then measure by actually decoding with ffmpeg. Header
 * durations are not trusted: a WAV can claim 10 s and carry minutes, and an
 * MP3's length is only an estimate until it is decoded.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runWithDeadline } from './deadline-run.ts';
import { MediaError } from './errors.ts';
import { type AudioKind, sniffAudio } from './sniff.ts';
import { assertByteSize, DEFAULT_FFMPEG_TIMEOUT_MS, type UploadBounds } from './upload-bounds.ts';

export interface InspectedAudio {
  kind: AudioKind;
  /** Measured by decoding: decoded samples / 16000. */
  durationSeconds: number;
  /** Decoded samples, 16 kHz mono, at most the first audioMaxSeconds + 1 s. */
  pcm16kMono: Int16Array;
}

export const PCM_SAMPLE_RATE = 16_000;

/**
 * Per kind: the demuxer to force (ffmpeg must not guess: its probing would
 * also accept playlists and other formats that can reference other files), and
 * the only decoders it may open, to keep ffmpeg's attack surface small. Video streams in an MP4 are never decoded.
 */
const DECODING: Record<AudioKind, { demuxer: string; decoders: string[]; demuxerOptions?: string[] }> = {
  'audio/wav': {
    demuxer: 'wav',
    decoders: [
      'pcm_u8',
      'pcm_s16le',
      'pcm_s24le',
      'pcm_s32le',
      'pcm_f32le',
      'pcm_f64le',
      'pcm_alaw',
      'pcm_mulaw',
      'adpcm_ms',
      'adpcm_ima_wav',
    ],
  },
  'audio/mpeg': { demuxer: 'mp3', decoders: ['mp3float', 'mp3', 'mp2float', 'mp2', 'mp1float', 'mp1'] },
  'audio/mp4': {
    demuxer: 'mov',
    decoders: ['aac', 'alac', 'mp3float', 'mp3', 'amrnb', 'amrwb'],
    // A track's data may live in another file (a data reference, `dref`): never opened. These
    // are ffmpeg's defaults today; said here so a build or a version that changes them cannot.
    demuxerOptions: ['-enable_drefs', '0', '-use_absolute_path', '0'],
  },
};

const KIND_NAME: Record<AudioKind, string> = { 'audio/wav': 'WAV', 'audio/mpeg': 'MP3', 'audio/mp4': 'MP4/M4A' };

export async function inspectAudio(bytes: Uint8Array, bounds: UploadBounds): Promise<InspectedAudio> {
  assertByteSize(bytes, 'audio', bounds.audioMaxBytes);
  const kind = await sniffAudio(bytes);
  const pcm16kMono = await decodeToPcm16kMono(bytes, kind, bounds);

  const durationSeconds = pcm16kMono.length / PCM_SAMPLE_RATE;
  if (durationSeconds > bounds.audioMaxSeconds) {
    // Decoding stops at max + 1 s, so say "longer than" rather than a length we did not measure.
    throw new MediaError(
      422,
      'audio',
      `The recording is longer than ${bounds.audioMaxSeconds} seconds; trim it to at most ${bounds.audioMaxSeconds} seconds.`,
      'audio.too_long',
    );
  }
  if (durationSeconds < bounds.audioMinSeconds) {
    throw new MediaError(
      422,
      'audio',
      `The recording is ${durationSeconds.toFixed(1)} seconds long; it must be at least ${bounds.audioMinSeconds} seconds.`,
      'audio.too_short',
    );
  }
  return { kind, durationSeconds, pcm16kMono };
}

/** util-linux's prlimit, where there is one (Linux): the decoder's own process limits. */
const PRLIMIT = ['/usr/bin/prlimit', '/bin/prlimit'].find((path) => existsSync(path));
/** Address space for the decoder: generous for two minutes of audio, small for a decompression bomb. */
const FFMPEG_MEMORY_BYTES = 1024 * 1024 * 1024;

export function withResourceLimits(args: string[], timeoutMs: number): string[] {
  if (!PRLIMIT) return args;
  const cpuSeconds = Math.max(1, Math.ceil(timeoutMs / 1000));
  return [PRLIMIT, `--cpu=${cpuSeconds}`, `--as=${FFMPEG_MEMORY_BYTES}`, '--fsize=0', '--nofile=64', '--', ...args];
}

/** ffmpeg's command line: only the kind's demuxer and decoders, the first audio stream, cut at `seconds`, as 16 kHz mono s16le. */
function decodeArgs(ffmpegPath: string, kind: AudioKind, inputPath: string, seconds: number): string[] {
  const { demuxer, decoders, demuxerOptions = [] } = DECODING[kind];
  return [
    ffmpegPath,
    '-hide_banner',
    '-nostdin',
    '-v',
    'error',
    '-protocol_whitelist',
    'file',
    '-codec_whitelist',
    decoders.join(','),
    '-f',
    demuxer,
    ...demuxerOptions,
    // WAV only: read samples to the end of the file, not the header's data size.
    ...(kind === 'audio/wav' ? ['-ignore_length', '1'] : []),
    '-i',
    inputPath,
    '-map',
    '0:a:0',
    '-vn',
    '-sn',
    '-dn',
    '-t',
    String(seconds),
    '-ac',
    '1',
    '-ar',
    String(PCM_SAMPLE_RATE),
    '-f',
    's16le',
    '-c:a',
    'pcm_s16le',
    'pipe:1',
  ];
}

/**
 * Decode the first audio stream to 16 kHz mono s16le. Input goes through a
 * private temp file rather than stdin because MP4s often keep their index
 * (moov) at the end, which ffmpeg can only reach by seeking.
 */
async function decodeToPcm16kMono(bytes: Uint8Array, kind: AudioKind, bounds: UploadBounds): Promise<Int16Array> {
  const name = KIND_NAME[kind];
  const maxDecodedSeconds = bounds.audioMaxSeconds + 1;
  const timeoutMs = bounds.ffmpegTimeoutMs ?? DEFAULT_FFMPEG_TIMEOUT_MS;

  const dir = await mkdtemp(join(tmpdir(), 'likeness-audio-'));
  try {
    const inputPath = join(dir, 'input');
    await writeFile(inputPath, bytes, { mode: 0o600 });

    const args = decodeArgs(bounds.ffmpegPath, kind, inputPath, maxDecodedSeconds);
    // Untrusted bytes meet a big C decoder: it runs with an empty environment (no secrets),
    // in the upload's own temporary folder, under limits on CPU time, memory and the files it
    // may write (none: its output is a pipe).
    const { exitCode, stdout, stderr, timedOut } = await runWithDeadline(
      withResourceLimits(args, timeoutMs),
      dir,
      timeoutMs,
    );

    // prlimit could not start ffmpeg (missing, not executable): the service's fault, not the upload's.
    if (PRLIMIT && (exitCode === 126 || exitCode === 127) && /prlimit: failed to execute/.test(stderr)) {
      throw new Error(`ffmpeg could not be started: ${stderr.trim().slice(-500)}`);
    }
    const cause = new Error(`ffmpeg exited ${exitCode}: ${stderr.slice(-2000)}`);
    if (timedOut) {
      throw new MediaError(422, 'audio', `The ${name} file took too long to decode.`, 'audio.undecodable', { cause });
    }
    if (exitCode !== 0 && /not on whitelist/.test(stderr)) {
      throw new MediaError(
        415,
        'audio',
        `This ${name} file uses an audio codec we don't support. Upload a PCM WAV, MP3 or AAC (M4A) recording.`,
        'media.unsupported_type',
        { cause },
      );
    }
    const sampleCount = Math.min(Math.floor(stdout.byteLength / 2), maxDecodedSeconds * PCM_SAMPLE_RATE);
    if (exitCode !== 0 || sampleCount === 0) {
      throw new MediaError(
        422,
        'audio',
        `The ${name} file is damaged or contains no audio that could be decoded.`,
        'audio.undecodable',
        { cause },
      );
    }
    // s16le output and every platform Bun runs on are little-endian.
    return new Int16Array(stdout, 0, sampleCount);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
