// ms per frame of the built-in talking head, rendering only (no VideoSource, no encoder),
// per shape, over real speech (espeak-ng, looped) and then as long listening (idle frames:
// breathing, sways, blinks):
//   bun bench/renderer/render-only.ts [--seconds 20]
// Wall time per frame (p50/p95) and the mean CPU time per frame, speaking and listening
// apart. On a machine shared with other work the wall times wander, the CPU time less.
import { parseArgs } from 'node:util';
import { espeak } from '../../test/support/fakes/speech.ts';
import { serveFace, talkingHead } from '../../test/pipelines/builtin/served-face.ts';
import { report } from '../support/index.ts';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '20' } } });
const frames = Math.round(Number(values.seconds) * 25);
const SLICE = 1920;
const WARM_UP = 50;

const face = await serveFace('astronaut');
const { samples: speech } = await espeak(
  'Hello! I am the avatar you are talking to. Ask me anything about space flight, and I will tell you what I know about it.',
  { sampleRate: 48_000 },
);
try {
  for (const shape of ['portrait', 'landscape'] as const) {
    const renderer = talkingHead(face, shape, { random: Math.random });
    await renderer.prepare();
    const audio = new Int16Array(SLICE);
    let elapsedFrames = 0;
    for (const mood of ['speaking', 'listening'] as const) {
      const times: number[] = [];
      let cpu = 0;
      let cursor = 0;
      for (let frame = 0; frame < frames + WARM_UP; frame++) {
        audio.fill(0);
        let speechSamples = 0;
        if (mood === 'speaking') {
          speechSamples = Math.min(SLICE, speech.length - cursor);
          audio.set(speech.subarray(cursor, cursor + speechSamples));
          cursor = cursor + SLICE >= speech.length ? 0 : cursor + SLICE;
        }
        const before = process.cpuUsage();
        const start = performance.now();
        renderer.nextFrame({ audio, speechSamples, elapsedMs: elapsedFrames++ * 40 });
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
