// Joining a recording's parts with ffmpeg (docs/decisions.md, "Recordings: parts joined at the
// end"): each part is one job's fragmented MP4; parts of the same shape (codecs, picture size,
// audio rate) are concatenated without re-encoding, others are re-encoded to the first part's
// picture size. Always a faststart MP4 (its index first, so a browser plays it while it loads).
// ffmpeg and ffprobe run as child processes with a timeout, never on the event loop.
import { stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { runWithDeadline } from '../media/index.ts';

/** A long session's parts are only copied; a re-encode is bounded too (a failure beats a hung sweep). */
export const JOIN_TIMEOUT_MS = 15 * 60_000;
const PROBE_TIMEOUT_MS = 30_000;

export interface StreamShape {
  codec_type: string;
  codec_name?: string;
  width?: number;
  height?: number;
  sample_rate?: string;
  channels?: number;
}

export interface Probed {
  streams: StreamShape[];
  durationSeconds: number;
}

export interface JoinedFile {
  path: string;
  durationMs: number;
  sizeBytes: number;
}

/** ffprobe beside ffmpeg (Debian's ffmpeg package has both), else from PATH. */
export function ffprobeBeside(ffmpegPath: string): string {
  return ffmpegPath.includes('/')
    ? join(dirname(ffmpegPath), basename(ffmpegPath).replace('ffmpeg', 'ffprobe'))
    : 'ffprobe';
}

export class JoinFailed extends Error {}

async function run(args: string[], cwd: string, timeoutMs: number): Promise<{ stdout: string; stderr: string }> {
  const { exitCode: code, stdout, stderr, timedOut } = await runWithDeadline(args, cwd, timeoutMs);
  const tool = basename(args[0]!);
  if (timedOut) throw new JoinFailed(`${tool} took longer than ${Math.round(timeoutMs / 1000)} s`);
  if (code !== 0) throw new JoinFailed(`${tool} exited ${code}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
  return { stdout: new TextDecoder().decode(stdout), stderr };
}

export async function probe(ffprobe: string, path: string, cwd: string): Promise<Probed> {
  const { stdout } = await run(
    [
      ffprobe,
      '-v',
      'error',
      '-show_entries',
      'stream=codec_type,codec_name,width,height,sample_rate,channels:format=duration',
      '-of',
      'json',
      path,
    ],
    cwd,
    PROBE_TIMEOUT_MS,
  );
  const parsed = JSON.parse(stdout) as { streams?: StreamShape[]; format?: { duration?: string } };
  return { streams: parsed.streams ?? [], durationSeconds: Number(parsed.format?.duration ?? 0) || 0 };
}

const shapeOf = (probed: Probed) =>
  JSON.stringify(
    probed.streams
      .filter((s) => s.codec_type === 'video' || s.codec_type === 'audio')
      .map((s) => [s.codec_type, s.codec_name, s.width, s.height, s.sample_rate, s.channels]),
  );

/** Re-encodes parts of voices alone, of different shapes, into one: 48 kHz stereo AAC. */
function reencodeAudioArgs(parts: { path: string; probed: Probed }[]): string[] {
  const inputs = parts.flatMap(({ path }) => ['-protocol_whitelist', 'file', '-i', path]);
  const filters = parts.map(
    (_, i) => `[${i}:a:0]aresample=48000,aformat=sample_fmts=fltp:channel_layouts=stereo[a${i}]`,
  );
  const joined = parts.map((_, i) => `[a${i}]`).join('');
  return [
    ...inputs,
    '-filter_complex',
    `${filters.join(';')};${joined}concat=n=${parts.length}:v=0:a=1[a]`,
    '-map',
    '[a]',
    '-c:a',
    'aac',
    '-b:a',
    '128k',
  ];
}

/** Re-encodes parts of different shapes into one: the first part's picture size, 48 kHz stereo, silence where a part has no audio. */
function reencodeArgs(parts: { path: string; probed: Probed }[]): string[] {
  const video = parts[0]!.probed.streams.find((s) => s.codec_type === 'video')!;
  const width = video.width ?? 1280;
  const height = video.height ?? 720;
  const inputs: string[] = [];
  const filters: string[] = [];
  const joined: string[] = [];
  let nextInput = parts.length;
  parts.forEach(({ path, probed }, i) => {
    inputs.push('-protocol_whitelist', 'file', '-i', path);
    filters.push(
      `[${i}:v:0]scale=${width}:${height}:force_original_aspect_ratio=decrease,pad=${width}:${height}:(ow-iw)/2:(oh-ih)/2,setsar=1,fps=25,format=yuv420p[v${i}]`,
    );
    if (probed.streams.some((s) => s.codec_type === 'audio')) {
      filters.push(`[${i}:a:0]aresample=48000,aformat=sample_fmts=fltp:channel_layouts=stereo[a${i}]`);
    } else {
      const silence = nextInput++;
      filters.push(`[${silence}:a]aformat=sample_fmts=fltp:channel_layouts=stereo[a${i}]`);
    }
    joined.push(`[v${i}][a${i}]`);
  });
  // The silent inputs go after the parts, in the order their numbers were given above.
  for (const { probed } of parts) {
    if (!probed.streams.some((s) => s.codec_type === 'audio'))
      inputs.push('-f', 'lavfi', '-t', String(probed.durationSeconds || 0.04), '-i', 'anullsrc=r=48000:cl=stereo');
  }
  filters.push(`${joined.join('')}concat=n=${parts.length}:v=1:a=1[v][a]`);
  return [
    ...inputs,
    '-filter_complex',
    filters.join(';'),
    '-map',
    '[v]',
    '-map',
    '[a]',
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-crf',
    '23',
    '-c:a',
    'aac',
    '-b:a',
    '128k',
  ];
}

/** ffmpeg's input for parts of one shape: their packets copied, one after the other. */
async function copyArgs(dir: string, parts: readonly { path: string }[]): Promise<string[]> {
  if (parts.length === 1)
    return ['-protocol_whitelist', 'file', '-i', parts[0]!.path, '-map', '0:v?', '-map', '0:a?', '-c', 'copy'];
  // The concat demuxer: one timeline, each part after the one before, the packets copied.
  const list = join(dir, 'parts.txt');
  await writeFile(list, parts.map((p) => `file '${basename(p.path)}'\n`).join(''));
  return [
    '-f',
    'concat',
    '-safe',
    '0',
    '-protocol_whitelist',
    'file',
    '-i',
    list,
    '-map',
    '0:v?',
    '-map',
    '0:a?',
    '-c',
    'copy',
  ];
}

/**
 * Joins the parts (files of fragmented MP4, in the order played) into `dir/recording.mp4`.
 * Parts without a video stream are left out (said in `dropped`) unless none has one (the voices
 * alone are joined); none readable: JoinFailed. `kept`:
 * the parts joined, in order, each with its length in the file.
 */
export async function joinParts(
  ffmpeg: string,
  dir: string,
  partPaths: readonly string[],
  timeoutMs = JOIN_TIMEOUT_MS,
): Promise<JoinedFile & { copied: boolean; dropped: string[]; kept: { path: string; durationMs: number }[] }> {
  const ffprobe = ffprobeBeside(ffmpeg);
  const readable: { path: string; probed: Probed }[] = [];
  for (const path of partPaths) {
    const probed = await probe(ffprobe, path, dir).catch(() => undefined);
    if (probed?.streams.some((s) => s.codec_type === 'video' || s.codec_type === 'audio'))
      readable.push({ path, probed });
  }
  // A recording with a picture keeps the parts that have one; a session recorded without frames
  // of ours (no avatar, or an avatar service's) is its voices alone.
  const hasVideo = (part: { probed: Probed }) => part.probed.streams.some((s) => s.codec_type === 'video');
  const audioOnly = !readable.some(hasVideo);
  const probedParts = audioOnly ? readable : readable.filter(hasVideo);
  const dropped = partPaths
    .filter((path) => !probedParts.some((part) => part.path === path))
    .map((path) => basename(path));
  if (probedParts.length === 0) throw new JoinFailed('none of the media received could be read');
  const output = join(dir, 'recording.mp4');
  const copied = new Set(probedParts.map((p) => shapeOf(p.probed))).size === 1;
  let inputArgs: string[];
  if (!copied && audioOnly) {
    inputArgs = reencodeAudioArgs(probedParts);
  } else if (!copied) {
    inputArgs = reencodeArgs(probedParts);
  } else inputArgs = await copyArgs(dir, probedParts);
  await run(
    [
      ffmpeg,
      '-hide_banner',
      '-nostdin',
      '-v',
      'error',
      ...inputArgs,
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
      '-y',
      output,
    ],
    dir,
    timeoutMs,
  );
  const measured = await probe(ffprobe, output, dir);
  const { size } = await stat(output);
  const kept = probedParts.map((p) => ({ path: p.path, durationMs: Math.round(p.probed.durationSeconds * 1000) }));
  return {
    path: output,
    durationMs: Math.round(measured.durationSeconds * 1000),
    sizeBytes: size,
    copied,
    dropped,
    kept,
  };
}
