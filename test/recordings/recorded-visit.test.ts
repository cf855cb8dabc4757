// A recorded visit end to end (issue 43's proof): a real LiveKit, an agent worker on the offline
// models in a process of its own, an rtc-node visitor who speaks, the service's store on the
// run's real S3 server (PGlite here; the recordings' tables on Postgres: recording-joined and
// customer-bucket). After the end the recording
// becomes `ready`; its file, fetched from its link, is an MP4 ffprobe reads as H.264 at the
// session's size and AAC, as long as the visit; the visitor's voice and the agent's are both in
// it (energy where each spoke); the mouth moves with the agent's audio (the lag that best lines
// up the agent's loudness with the mouth's motion is within 100 ms); Chromium plays it in a
// <video> whose frames change and whose duration matches.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rm } from 'node:fs/promises';
import { TrackKind } from '@livekit/rtc-node';
import { AVATAR_FPS, avatarFrameSize, avatarShapeFor } from '../../src/contract/index.ts';
import { launchBrowser } from '../support/browser.ts';
import { type IdentityBody, identityForm } from '../support/forms.ts';
import { type OfflineAgentService, startOfflineAgentService } from '../support/offline-agent.ts';
import { freshBucket, type TestBucket } from '../support/s3.ts';
import { eventually, joinAsVisitor, type StartedSession } from '../support/visitor.ts';
import { Listener, Microphone, speech } from '../support/voice.ts';

const QUESTION = 'What time does the museum open today?';
const NOTICE = 'This conversation is recorded.';
/** The recording's audio, decoded for the checks: 16 kHz mono, read in 40 ms steps (one video frame). */
const CHECK_RATE = 16_000;
const STEP_SAMPLES = CHECK_RATE / AVATAR_FPS;

interface Recording {
  status: string;
  reason: string | null;
  duration_seconds: number | null;
  size_bytes: number | null;
  download_url: string | null;
}

describe('a recorded visit', () => {
  let offline: OfflineAgentService;
  let bucket: TestBucket;

  beforeAll(async () => {
    bucket = await freshBucket();
    offline = await startOfflineAgentService('recorded-visit', {
      env: { RECORDING_FINISH_WAIT_SECONDS: '5', RECORDING_SWEEP_INTERVAL_SECONDS: '1', ...bucket.env() },
    });
  }, 120_000);
  afterAll(() => offline?.stop());

  test(
    'is one MP4 of what the visitor saw and both voices, in sync, that a browser plays',
    () =>
      offline.explained(async () => {
        const { account } = offline;
        const identity = (await (
          await account.call('POST', '/v1/identities', {
            body: await identityForm({
              language: 'en',
              prompt: 'You are Ada, a friendly tour guide in Paris. Answer in one short sentence.',
            }),
          })
        ).json()) as IdentityBody;
        const started = await account.call('POST', '/v1/sessions/start', {
          body: JSON.stringify({
            identity_id: identity.identity_id,
            visual_awareness: false,
            record: true,
            recording_notice: NOTICE,
          }),
          headers: { 'content-type': 'application/json' },
        });
        expect(started.status).toBe(200);
        const session = (await started.json()) as StartedSession;
        // Wall-clock times of this process's performance.now() readings.
        const wallOf = (at: number) => performance.timeOrigin + at;
        const joinedAt = performance.now();
        const visitor = await joinAsVisitor(session);
        const microphone = await Microphone.publish(visitor.room);
        const ears = new Listener(
          await eventually(
            () => visitor.tracks.find((t) => t.kind === TrackKind.KIND_AUDIO),
            60_000,
            "the avatar's audio",
          ),
        );
        let question: { startedAt: number; endedAt: number };
        let reply: { from: number; to: number };
        let greeting: { from: number; to: number };
        try {
          // The notice, then the greeting: both spoken before the visitor asks.
          const greetingFrom = await eventually(() => ears.soundAfter(joinedAt), 60_000, 'the notice');
          const agentTurns = await eventually(
            async () => {
              const { turns } = (await (
                await account.call('GET', `/v1/sessions/${session.room_name}/transcript`)
              ).json()) as { turns: { role: string; text: string }[] };
              const said = turns.filter((turn) => turn.role === 'agent').map((turn) => turn.text);
              return said.length >= 2 ? said : undefined;
            },
            60_000,
            'the notice and the greeting in the transcript',
          );
          expect(agentTurns[0]).toBe(NOTICE);
          const greetingTo = await eventually(() => ears.silenceAfter(greetingFrom, 600), 60_000, 'its end');
          greeting = { from: greetingFrom, to: greetingTo };
          question = await microphone.say(await speech(QUESTION, { voice: 'piper' }));
          const replyFrom = await eventually(() => ears.soundAfter(question.endedAt), 60_000, 'the reply');
          const replyTo = await eventually(() => ears.silenceAfter(replyFrom, 600), 60_000, 'its end');
          reply = { from: replyFrom, to: replyTo };
          await Bun.sleep(500);
        } finally {
          ears.close();
          await microphone.stop();
          await account.call('POST', `/v1/sessions/${session.room_name}/end`);
          await visitor.leave().catch(() => undefined);
        }
        // The visitor's turn spans their speech (its captions show while they speak), not the
        // moment its words were recognised.
        const { turns } = (await (
          await account.call('GET', `/v1/sessions/${session.room_name}/transcript`)
        ).json()) as { turns: { role: string; started_at: string; ended_at: string }[] };
        const visitorTurn = turns.find((turn) => turn.role === 'user')!;
        const askedFrom = Date.parse(visitorTurn.started_at);
        console.log(
          `recorded visit: the visitor's turn ${askedFrom - wallOf(question!.startedAt)} ms from their speech's start, ${Date.parse(visitorTurn.ended_at) - askedFrom} ms long (spoken ${Math.round(question!.endedAt - question!.startedAt)} ms)`,
        );
        expect(Math.abs(askedFrom - wallOf(question!.startedAt))).toBeLessThan(1_500);
        expect(Date.parse(visitorTurn.ended_at) - askedFrom).toBeGreaterThan(1_000);
        const read = (await (await account.call('GET', `/v1/sessions/${session.room_name}`)).json()) as {
          record: boolean;
          streaming_started_at: string;
          ended_at: string;
        };
        expect(read.record).toBe(true);

        const recording = await eventually(
          async () => {
            const body = (await (
              await account.call('GET', `/v1/sessions/${session.room_name}/recording`)
            ).json()) as Recording;
            return body.status === 'ready' || body.status === 'failed' ? body : undefined;
          },
          90_000,
          'the recording, ready',
        );
        expect(recording.reason).toBeNull();
        expect(recording.status).toBe('ready');
        const file = await fetch(recording.download_url!);
        expect(file.status).toBe(200);
        expect(file.headers.get('content-type')).toBe('video/mp4');
        const bytes = new Uint8Array(await file.arrayBuffer());
        expect(bytes.length).toBe(recording.size_bytes!);
        // Kept in the S3 bucket; its chunks are removed once it is ready (just after).
        const ours = async () =>
          (await bucket.keys()).filter((key) => key.includes(`recordings/${session.room_name}/`));
        await eventually(async () => (await ours()).length === 1, 15_000, "the recording's chunks removed");
        expect(await ours()).toEqual([
          expect.stringMatching(new RegExp(`recordings/${session.room_name}/recording\\.mp4$`)),
        ]);
        const path = `/tmp/likeness-recorded-visit-${process.pid}.mp4`;
        await Bun.write(path, bytes);
        try {
          // What ffprobe reads: one H.264 stream at the session's size, one AAC stream, the visit's length.
          const probe = await ffprobe(path);
          const video = probe.streams.filter((s) => s.codec_type === 'video');
          const audio = probe.streams.filter((s) => s.codec_type === 'audio');
          expect(video.map((s) => s.codec_name)).toEqual(['h264']);
          expect(audio.map((s) => s.codec_name)).toEqual(['aac']);
          const size = avatarFrameSize(avatarShapeFor(null, true));
          expect({ width: video[0]!.width, height: video[0]!.height }).toEqual(size);
          const streamedAt = Date.parse(read.streaming_started_at);
          const visitSeconds = (Date.parse(read.ended_at) - streamedAt) / 1000;
          const duration = Number(probe.format.duration);
          console.log(`recorded visit: ${duration.toFixed(2)} s recorded of a ${visitSeconds.toFixed(2)} s visit`);
          expect(Math.abs(duration - visitSeconds)).toBeLessThan(2);
          expect(Math.abs(duration - recording.duration_seconds!)).toBeLessThan(0.5);

          // Both voices: loud where the visitor asked (the agent listens then) and where the agent spoke.
          const levels = await audioLevels(path);
          const at = (wall: number) => Math.round(((wall - streamedAt) / 1000) * AVATAR_FPS);
          const loudness = (from: number, to: number) => {
            const window = levels.slice(Math.max(0, at(wallOf(from)) + 5), Math.max(0, at(wallOf(to)) - 5));
            return window.length === 0 ? 0 : window.reduce((sum, level) => sum + level, 0) / window.length;
          };
          const quiet = percentile(levels, 0.1);
          const asked = loudness(question!.startedAt, question!.endedAt);
          const answered = loudness(reply!.from, reply!.to);
          const greeted = loudness(greeting!.from, greeting!.to);
          console.log(
            `recorded visit: mean rms greeting ${greeted.toFixed(0)}, question ${asked.toFixed(0)}, reply ${answered.toFixed(0)}, quietest tenth ${quiet.toFixed(0)}`,
          );
          expect(asked).toBeGreaterThan(Math.max(300, quiet * 5));
          expect(answered).toBeGreaterThan(Math.max(300, quiet * 5));
          expect(greeted).toBeGreaterThan(Math.max(300, quiet * 5));

          // The mouth with the agent's voice: the lag that best lines up the agent's loudness (the
          // visitor's question left out) with the motion in the lower middle of the frame.
          const motion = await mouthMotion(path, size);
          const agentOnly = levels.map((level, i) =>
            i >= at(wallOf(question!.startedAt)) - 5 && i <= at(wallOf(question!.endedAt)) + 5 ? 0 : level,
          );
          const lag = bestLag(agentOnly, motion, 10);
          console.log(
            `recorded visit: mouth motion best follows the agent's audio at ${lag.frames * 40} ms (r=${lag.r.toFixed(2)})`,
          );
          expect(lag.r).toBeGreaterThan(0.3);
          expect(Math.abs(lag.frames * (1000 / AVATAR_FPS))).toBeLessThanOrEqual(100);

          // A browser plays it: duration as ffprobe reads it, time advancing, frames that change.
          const browser = await launchBrowser();
          try {
            const { page } = await browser.newPage();
            await page.goto(recording.download_url!);
            const played = await page.evaluate(async () => {
              const video = document.querySelector('video')!;
              video.muted = true;
              if (video.readyState < 1)
                await new Promise((resolve) => video.addEventListener('loadedmetadata', resolve));
              const grab = async (time: number) => {
                video.currentTime = time;
                await new Promise((resolve) => video.addEventListener('seeked', resolve, { once: true }));
                const canvas = document.createElement('canvas');
                canvas.width = 64;
                canvas.height = 64;
                const context = canvas.getContext('2d')!;
                context.drawImage(video, 0, 0, 64, 64);
                return Array.from(context.getImageData(0, 0, 64, 64).data);
              };
              const first = await grab(0.5);
              const later = await grab(video.duration / 2);
              video.currentTime = 0;
              await video.play();
              await new Promise((resolve) => setTimeout(resolve, 1000));
              let differing = 0;
              for (let i = 0; i < first.length; i++) if (Math.abs(first[i]! - later[i]!) > 8) differing++;
              return { duration: video.duration, playedTo: video.currentTime, differing, width: video.videoWidth };
            });
            console.log(`recorded visit in Chromium: ${JSON.stringify(played)}`);
            expect(Math.abs(played.duration - duration)).toBeLessThan(0.5);
            expect(played.playedTo).toBeGreaterThan(0.3);
            expect(played.differing).toBeGreaterThan(0);
            expect(played.width).toBe(size.width);
          } finally {
            await browser.close();
          }
        } finally {
          await rm(path, { force: true });
        }
      }),
    300_000,
  );
});

interface Probe {
  streams: { codec_type: string; codec_name: string; width?: number; height?: number }[];
  format: { duration: string };
}

async function ffprobe(path: string): Promise<Probe> {
  const proc = Bun.spawn(['ffprobe', '-v', 'error', '-show_streams', '-show_format', '-of', 'json', path], {
    stdout: 'pipe',
  });
  return JSON.parse(await new Response(proc.stdout).text()) as Probe;
}

/** The RMS of each 40 ms of the file's audio (16 kHz mono). */
async function audioLevels(path: string): Promise<number[]> {
  const proc = Bun.spawn(
    ['ffmpeg', '-v', 'error', '-i', path, '-vn', '-ac', '1', '-ar', String(CHECK_RATE), '-f', 's16le', '-'],
    {
      stdout: 'pipe',
    },
  );
  const pcm = new Int16Array((await new Response(proc.stdout).arrayBuffer()).slice(0));
  const levels: number[] = [];
  for (let start = 0; start + STEP_SAMPLES <= pcm.length; start += STEP_SAMPLES) {
    let sum = 0;
    for (let i = start; i < start + STEP_SAMPLES; i++) sum += pcm[i]! * pcm[i]!;
    levels.push(Math.sqrt(sum / STEP_SAMPLES));
  }
  return levels;
}

/**
 * How much the lower middle of each frame (where a framed face's mouth is) changed since the
 * frame before: the mean absolute difference of a small grey copy of that region.
 */
async function mouthMotion(path: string, size: { width: number; height: number }): Promise<number[]> {
  const [w, h] = [48, 32];
  const crop = `crop=${Math.round(size.width * 0.3)}:${Math.round(size.height * 0.3)}:${Math.round(size.width * 0.35)}:${Math.round(size.height * 0.5)}`;
  const proc = Bun.spawn(
    ['ffmpeg', '-v', 'error', '-i', path, '-an', '-vf', `${crop},scale=${w}:${h},format=gray`, '-f', 'rawvideo', '-'],
    { stdout: 'pipe' },
  );
  const frames = new Uint8Array(await new Response(proc.stdout).arrayBuffer());
  const motion: number[] = [0];
  for (let f = 1; (f + 1) * w * h <= frames.length; f++) {
    let sum = 0;
    for (let i = 0; i < w * h; i++) sum += Math.abs(frames[f * w * h + i]! - frames[(f - 1) * w * h + i]!);
    motion.push(sum / (w * h));
  }
  return motion;
}

/** The shift of `b` against `a` (in frames, ±range) with the highest correlation; positive: `b` lags. */
function bestLag(a: number[], b: number[], range: number): { frames: number; r: number } {
  let best = { frames: 0, r: -Infinity };
  for (let lag = -range; lag <= range; lag++) {
    const xs: number[] = [];
    const ys: number[] = [];
    for (let i = 0; i < a.length; i++) {
      const j = i + lag;
      if (j >= 0 && j < b.length) {
        xs.push(a[i]!);
        ys.push(b[j]!);
      }
    }
    const r = correlation(xs, ys);
    if (r > best.r) best = { frames: lag, r };
  }
  return best;
}

function correlation(xs: number[], ys: number[]): number {
  const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
  const [mx, my] = [mean(xs), mean(ys)];
  let [sxy, sxx, syy] = [0, 0, 0];
  for (let i = 0; i < xs.length; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
    syy += (ys[i]! - my) ** 2;
  }
  return sxx && syy ? sxy / Math.sqrt(sxx * syy) : 0;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(p * (sorted.length - 1))] ?? 0;
}
