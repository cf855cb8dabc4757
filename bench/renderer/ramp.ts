// bench/renderer's ramp: 1, 2, … sessions at once, each a real session with the voice agent
// (wire fakes for the cloud providers) and a visitor receiving its video; at each level the
// frames per second every visitor decoded over the window and the CPU each kind of process
// used. The visitors run in a process of their own (visitors.ts), whose CPU is its own column:
// a real visitor decodes on their own device. With `turnEveryMs` each visitor asks a question
// that often, so the avatars alternate between speaking and listening; with `stages`, before
// the ramp goes on, one session's job is measured by thread while it listens and while it speaks.
import { join } from 'node:path';
import type { StartedSession } from '../../test/support/visitor.ts';
import { byThread, cpuSeconds, cpuSnapshot, jobPids, processTicks, threadTicks } from './cpu.ts';

export interface RampOptions {
  maxSessions: number;
  windowMs: number;
  settleMs: number;
  minFps: number;
  turnEveryMs: number;
  /** The visitors' microphones send encoded silence between questions (a queued source). */
  visitorsSendSilence: boolean;
  stages: boolean;
  record: boolean;
  startSession(): Promise<StartedSession>;
  endSession(session: StartedSession): Promise<void>;
}

type FromVisitors = { ready?: true; joined?: number; decoded?: number[]; captions?: number[]; error?: string };

/** The visitors' process, answering one request at a time. */
class Visitors {
  readonly #process: Bun.Subprocess;
  #waiting: ((message: FromVisitors) => void)[] = [];

  constructor(turnEveryMs: number, sendSilence: boolean) {
    this.#process = Bun.spawn([process.execPath, join(import.meta.dir, 'visitors.ts')], {
      env: {
        ...process.env,
        BENCH_TURN_EVERY_MS: String(turnEveryMs),
        BENCH_VISITORS_SEND_SILENCE: sendSilence ? '1' : '',
      },
      stdout: 'inherit',
      stderr: 'inherit',
      ipc: (message: FromVisitors) => this.#waiting.shift()?.(message),
    });
  }

  get pid(): number {
    return this.#process.pid;
  }

  #ask(message: unknown): Promise<FromVisitors> {
    return new Promise((resolve, reject) => {
      this.#waiting.push((answer) => (answer.error ? reject(new Error(answer.error)) : resolve(answer)));
      if (message !== null) this.#process.send(message);
    });
  }

  ready = (): Promise<FromVisitors> => this.#ask(null);
  join = (session: StartedSession, index: number) => this.#ask({ join: session, index });
  ask = (index: number) => this.#ask({ ask: index });
  turns = () => this.#ask({ turns: true });
  /** Frames each visitor decoded so far, and the agent's caption segments each received (its replies). */
  decoded = async (): Promise<{ frames: number[]; captions: number[] }> => {
    const answer = await this.#ask({ decoded: true });
    return { frames: answer.decoded ?? [], captions: answer.captions ?? [] };
  };

  async stop(): Promise<void> {
    this.#process.send({ stop: true });
    await Promise.race([this.#process.exited, Bun.sleep(10_000)]);
    this.#process.kill();
  }
}

export async function runRamp(options: RampOptions): Promise<number> {
  const visitors = new Visitors(options.turnEveryMs, options.visitorsSendSilence);
  await visitors.ready();
  const sessions: StartedSession[] = [];
  let capacity = 0;
  const percent = (share: number) => `${(share * 100).toFixed(0)} %`;
  try {
    for (let n = 1; n <= options.maxSessions; n++) {
      try {
        const session = await options.startSession();
        sessions.push(session);
        await visitors.join(session, n - 1);
      } catch (error) {
        // A full machine may not get one more session's video to its visitor in time.
        console.log(`${String(n).padEnd(10)}no session: ${(error as Error).message}`);
        break;
      }
      await Bun.sleep(options.settleMs);
      if (n === 1 && options.stages) await measureStages(visitors, options);
      if (n === 1) {
        if (options.turnEveryMs > 0) await visitors.turns();
        console.log(
          `sessions  fps at the visitors (min / mean)  job CPU per session  all jobs  inference  LiveKit  service+worker  visitors${options.record ? '  recorders (ffmpeg)' : ''}`,
        );
      }
      const decodedBefore = await visitors.decoded();
      const before = cpuSnapshot();
      const visitorsBefore = processTicks(visitors.pid) ?? 0;
      const threadsBefore = threadTicks(jobPids());
      const visitorThreadsBefore = threadTicks([visitors.pid]);
      const from = performance.now();
      await Bun.sleep(options.windowMs);
      const to = performance.now();
      const after = cpuSnapshot();
      const visitorsAfter = processTicks(visitors.pid) ?? 0;
      const threadsAfter = threadTicks(jobPids());
      const visitorThreadsAfter = threadTicks([visitors.pid]);
      const decodedAfter = await visitors.decoded();
      const wallSeconds = (to - from) / 1000;
      const fps = decodedAfter.frames.map(
        (frames, i) => ((frames - (decodedBefore.frames[i] ?? 0)) * 1000) / (to - from),
      );
      const replies = decodedAfter.captions.reduce(
        (sum, count, i) => sum + count - (decodedBefore.captions[i] ?? 0),
        0,
      );
      const jobs = cpuSeconds(before.jobs, after.jobs) / wallSeconds;
      const minFps = Math.min(...fps);
      const meanFps = fps.reduce((a, b) => a + b, 0) / fps.length;
      // The bench's own process is the service and the worker; the visitors' is apart.
      const columns = [
        String(n).padEnd(10),
        `${minFps.toFixed(1)} / ${meanFps.toFixed(1)}`.padEnd(34),
        percent(jobs / n).padEnd(21),
        percent(jobs).padEnd(10),
        percent(cpuSeconds(before.inference, after.inference) / wallSeconds).padEnd(11),
        percent(cpuSeconds(before.livekit, after.livekit) / wallSeconds).padEnd(9),
        percent((after.self - before.self) / wallSeconds).padEnd(16),
        percent((visitorsAfter - visitorsBefore) / 100 / wallSeconds).padEnd(10),
        options.record ? percent(cpuSeconds(before.recorders, after.recorders) / wallSeconds) : '',
      ];
      console.log(columns.join(''));
      console.log(`          per session by thread: ${byThread(threadsBefore, threadsAfter, wallSeconds, n)}`);
      console.log(
        `          per visitor by thread: ${byThread(visitorThreadsBefore, visitorThreadsAfter, wallSeconds, n)}`,
      );
      // The avatars' replies in the window (caption segments): a ramp whose avatars stopped
      // answering would measure listening alone.
      if (options.turnEveryMs > 0) console.log(`          replies in the window: ${replies}`);
      if (minFps >= options.minFps) capacity = n;
      else if (n > capacity + 1) break; // two levels below the mark: the machine is full
    }
  } finally {
    await visitors.stop();
    for (const session of sessions) await options.endSession(session).catch(() => undefined);
  }
  return capacity;
}

/** One session's job by thread: a window while its avatar listens, then one while it speaks. */
async function measureStages(visitors: Visitors, options: RampOptions): Promise<void> {
  const window = async (label: string, ms: number) => {
    const before = threadTicks(jobPids());
    const from = performance.now();
    await Bun.sleep(ms);
    const seconds = (performance.now() - from) / 1000;
    console.log(`one session ${label}, its job by thread: ${byThread(before, threadTicks(jobPids()), seconds)}`);
  };
  await window('listening', options.windowMs);
  await visitors.ask(0);
  // The question (~2 s) is heard and answered; the reply then speaks for longer than the window.
  await Bun.sleep(3_500);
  await window('speaking', Math.min(options.windowMs, 6_000));
  await Bun.sleep(8_000);
}
