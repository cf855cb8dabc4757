// ms per frame of the built-in talking head, rendering only (no VideoSource, no encoder),
// per shape, over real speech (espeak-ng, looped) and then as long listening (idle frames:
// breathing, sways, blinks):
//   bun bench/renderer/render-only.ts [--seconds 20] [--voice espeak|piper]
// `--voice piper` speaks with the offline Piper voice through the avatar's speech queue, so
// the lips follow its visemes (pressed lips included); espeak-ng gives loudness only.
// Wall time per frame (p50/p95) and the mean CPU time per frame, speaking and listening
// apart. On a machine shared with other work the wall times wander, the CPU time less.
import { parseArgs } from 'node:util';
import { initializeLogger } from '@livekit/agents';
import { AvatarSpeech } from '../../agent/avatar/index.ts';
import { loadOfflineSpeech, OfflineTTS } from '../../agent/providers/offline/index.ts';
import type { Viseme } from '../../agent/visemes/index.ts';
import { loadProviders } from '../../src/config.ts';
import { serveFace, talkingHead } from '../../test/pipelines/builtin/served-face.ts';
import { espeak } from '../../test/support/fakes/speech.ts';
import { report } from '../support/index.ts';

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '20' }, voice: { type: 'string', default: 'espeak' } },
});
const frames = Math.round(Number(values.seconds) * 25);
const SLICE = 1920;
const WARM_UP = 50;

const face = await serveFace('astronaut');
const TEXT =
  'Hello! I am the avatar you are talking to. Ask me anything about space flight, and I will tell you what I know about it.';
/** The speech in 40 ms slices, with the visemes the speech queue hands the renderer. */
const slices: Array<{ audio: Int16Array; speechSamples: number; visemes?: Partial<Record<Viseme, number>> }> = [];
if (values.voice === 'piper') {
  initializeLogger({ pretty: false, level: 'warn' });
  const server = await loadOfflineSpeech(loadProviders(process.env).modelsDir);
  const queue = new AvatarSpeech();
  for await (const audio of new OfflineTTS(server, 'espeak-ng', { language: 'en', profile: null }).synthesize(TEXT))
    await queue.captureFrame(audio.frame);
  queue.flush();
  await server.close();
  for (let slice = queue.take(SLICE); slice.speechSamples > 0; slice = queue.take(SLICE))
    slices.push({ audio: slice.samples, speechSamples: slice.speechSamples, visemes: slice.visemes });
} else {
  const { samples: speech } = await espeak(TEXT, { sampleRate: 48_000 });
  for (let at = 0; at < speech.length; at += SLICE) {
    const audio = new Int16Array(SLICE);
    audio.set(speech.subarray(at, at + SLICE));
    slices.push({ audio, speechSamples: Math.min(SLICE, speech.length - at) });
  }
}
console.log(`voice: ${values.voice}, ${slices.length} frames of speech, looped`);
try {
  for (const shape of ['portrait', 'landscape'] as const) {
    const renderer = talkingHead(face, shape, { random: Math.random });
    await renderer.prepare();
    const silence = new Int16Array(SLICE);
    let elapsedFrames = 0;
    for (const mood of ['speaking', 'listening'] as const) {
      const times: number[] = [];
      let cpu = 0;
      for (let frame = 0; frame < frames + WARM_UP; frame++) {
        const slice = mood === 'speaking' ? slices[frame % slices.length]! : { audio: silence, speechSamples: 0 };
        const before = process.cpuUsage();
        const start = performance.now();
        renderer.nextFrame({ ...slice, elapsedMs: elapsedFrames++ * 40 });
        const wall = performance.now() - start;
        const used = process.cpuUsage(before);
        if (frame < WARM_UP) continue; // the JIT warms up, the mood settles
        times.push(wall);
        cpu += (used.user + used.system) / 1000;
      }
      const { width, height } = renderer.size;
      report(`${shape} ${width}×${height} ${mood} (wall)`, times, { digits: 2 });
      console.log(`${shape} ${mood}: mean CPU ${(cpu / times.length).toFixed(2)} ms/frame over ${times.length} frames`);
    }
  }
} finally {
  await face.stop();
}
process.exit(0);
