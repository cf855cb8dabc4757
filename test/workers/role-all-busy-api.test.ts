// Issue 41 point 4: the agent worker in the API's process (`--role all`, as startTestService runs
// it) survives a busy API. While the avatar speaks to an rtc-node visitor, an account uploads
// documents built to stall extraction (200 KB of blank Markdown lines, a 93-byte table cell
// spanning a million columns) beside waves of 200 ordinary requests. The visitor hears no gap
// in the speech, the worker's heartbeats keep reaching the control plane within their TTL, the
// session's job process is reaped after the session ends while the load goes on (no zombie child
// of this process), and a second session is admitted and gets its agent. With extraction on the
// event loop (before 0698586) this process froze for minutes (docs/decisions.md, "`--role all` keeps the
// agent worker in the API's process").
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { HEARTBEAT_PATH, HEARTBEAT_TTL_SECONDS } from '../../src/contract/index.ts';
import { documentForm } from '../knowledge/support.ts';
import { MS_PER_CHARACTER } from '../support/fakes/elevenlabs.ts';
import { identityForm } from '../support/forms.ts';
import { joinListening } from '../support/listening-visitor.ts';
import { sharedProviderFakes } from '../support/preload.ts';
import { jobProcesses } from '../support/processes.ts';
import { ENGINES, type TestAccount, type TestService } from '../support/service.ts';
import { eventually, joinAsVisitor, type StartedSession, type Visitor } from '../support/visitor.ts';
import { startVisitorService } from '../support/visitor-service.ts';
import type { Listener } from '../support/voice.ts';

const fakes = sharedProviderFakes();
/** Words only (~9 s of the fake's speech): its only silences are the spaces, MS_PER_CHARACTER each. */
const SPEECH =
  'Let me tell you about our opening hours and our shop in the old town and the market on Saturdays and the new bakery near the station and then about the river walk and the bridges and the gardens behind the museum and the little cafe on the corner of the square';
const BLANK_MARKDOWN = '\n'.repeat(200_000);
const SPANNING_CELL = '<table><tr><td colspan="1000000" rowspan="1000000">x</td></tr></table>';
/** Longest silence inside the speech: a space plus a frame either side, and room; a stall of the job's audio is far longer. */
const MAX_GAP_MS = 300;
const FRAME_MS = 10;

/**
 * Heartbeats the control plane answered, as the worker hears them (its `fetch` is this process's).
 * One that failed, or ran past the TTL and was aborted, is a gap.
 */
function recordHeartbeats() {
  const answered: number[] = [];
  const original = globalThis.fetch;
  globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const response = await original(input, init);
    const beat = String(input instanceof Request ? input.url : input).endsWith(HEARTBEAT_PATH);
    if (beat && response.ok) answered.push(performance.now());
    return response;
  }) as typeof fetch;
  return {
    /** The longest time between two answered beats, from `from` to now. */
    longestGapSince(from: number) {
      const times = [from, ...answered.filter((at) => at > from), performance.now()];
      return Math.max(...times.slice(1).map((at, i) => at - times[i]!));
    },
    restore: () => {
      globalThis.fetch = original;
    },
  };
}

/** The longest run of quiet 10 ms frames between the first and the last loud one after `from`. */
function longestSilenceMs(listener: Listener, from: number, threshold = 300): { gapMs: number; spokenMs: number } {
  const frames = listener.levels.filter((level) => level.at > from);
  const first = frames.findIndex((f) => f.rms > threshold);
  const last = frames.findLastIndex((f) => f.rms > threshold);
  let run = 0;
  let longest = 0;
  for (const frame of frames.slice(first, last + 1)) {
    run = frame.rms > threshold ? 0 : run + 1;
    longest = Math.max(longest, run);
  }
  return { gapMs: longest * FRAME_MS, spokenMs: (last - first + 1) * FRAME_MS };
}

/** State letters of this process's children (`Z`: exited, never reaped). */
function childStates(): { pid: number; state: string }[] {
  return Bun.spawnSync(['ps', '--ppid', String(process.pid), '-o', 'pid=,stat='])
    .stdout.toString()
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [pid, state] = line.trim().split(/\s+/);
      return { pid: Number(pid), state: state ?? '' };
    });
}

describe.each(ENGINES)('the agent worker in the API process while the API is loaded (%s)', (engine) => {
  let service: TestService;
  let account: TestAccount;
  let attacker: TestAccount;
  let identityId: string;

  beforeAll(async () => {
    ({ service, account } = await startVisitorService({}, { credits: 100_000, engine }));
    attacker = await service.account();
    const identity = await account.call('POST', '/v1/identities', { body: await identityForm({ language: 'en' }) });
    identityId = ((await identity.json()) as { identity_id: string }).identity_id;
    fakes.openai.respond(() => 'Happy to help.');
  }, 120_000);
  afterAll(() => service?.stop());

  const json = (body: unknown) => ({ body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

  async function start(): Promise<{ session: StartedSession; startedAt: number }> {
    const startedAt = performance.now();
    const answer = await account.call(
      'POST',
      '/v1/sessions/start',
      json({ identity_id: identityId, idle_timeout_seconds: 0 }),
    );
    expect(answer.status).toBe(200);
    return { session: (await answer.json()) as StartedSession, startedAt };
  }

  /** The visitor in the room with the agent, the greeting said and heard to its end. */
  async function visit(session: StartedSession): Promise<{ visitor: Visitor; ears: () => Listener }> {
    const { visitor, ears } = await joinListening(session);
    const joined = performance.now();
    const greeted = await eventually(() => ears().soundAfter(joined - 5_000), 30_000, 'the greeting');
    await eventually(() => ears().silenceAfter(greeted, 500) !== undefined, 20_000, 'quiet after the greeting');
    return { visitor, ears };
  }

  /**
   * Waves of 200 GETs at once, the first 10 with 2 hostile uploads (an account keeps at most 100
   * documents), until `done()`; every call must still be answered as usual.
   */
  async function loadApi(done: () => boolean) {
    const stats = { waves: 0, uploads: 0, requests: 0, slowestMs: 0 };
    do {
      const uploads = stats.waves < 10;
      const timed = async (call: Promise<Response>, status: number) => {
        const asked = performance.now();
        const answer = await call;
        await answer.arrayBuffer();
        stats.slowestMs = Math.max(stats.slowestMs, performance.now() - asked);
        expect(answer.status).toBe(status);
      };
      await Promise.all([
        ...(uploads
          ? [
              timed(attacker.call('POST', '/v1/documents', { body: documentForm(BLANK_MARKDOWN, 'x.md') }), 202),
              timed(attacker.call('POST', '/v1/documents', { body: documentForm(SPANNING_CELL, 'x.html') }), 202),
            ]
          : []),
        ...Array.from({ length: 200 }, () => timed(attacker.call('GET', '/v1/identities'), 200)),
      ]);
      stats.waves++;
      stats.uploads += uploads ? 2 : 0;
      stats.requests += 200;
    } while (!done() && stats.waves < 100);
    return stats;
  }

  test('speech keeps its audio, heartbeats arrive, the ended job is reaped, a new session is admitted', async () => {
    await eventually(() => service.worker!.warmedUp(), 60_000, 'a warm job process for every slot');
    const warm = jobProcesses();
    const first = await start();
    const { visitor, ears } = await visit(first.session);
    const heartbeats = recordHeartbeats();
    // Both bursts stop once their part is over, or when the test fails.
    let spoken = false;
    let reaped = false;
    try {
      const saidAt = performance.now();
      const said = await account.call('POST', `/v1/sessions/${first.session.room_name}/say`, json({ text: SPEECH }));
      expect(said.status).toBe(200);
      const speaking = await eventually(() => ears().soundAfter(saidAt), 15_000, 'the speech');
      // The load begins as the speech does and goes on until its last word was heard.
      const loading = loadApi(() => spoken);
      const ended = await eventually(() => ears().silenceAfter(speaking, 600), 60_000, 'the end of the speech');
      spoken = true;
      const load = await loading;
      const { gapMs, spokenMs } = longestSilenceMs(ears(), speaking - 1);
      const heard = ears().levels.filter((l) => l.at >= speaking && l.at <= ended);
      const arrivalGapMs = Math.max(...heard.slice(1).map((l, i) => l.at - heard[i]!.at));
      const heartbeatGapMs = heartbeats.longestGapSince(speaking);
      console.log(
        `${engine}: ${load.waves} waves (${load.uploads} uploads, ${load.requests} GETs, slowest answer ${Math.round(load.slowestMs)} ms) ` +
          `over ${Math.round(spokenMs)} ms of speech: longest silence ${gapMs} ms, longest wait between frames ` +
          `${Math.round(arrivalGapMs)} ms (the visitor shares this loop), longest between heartbeats ${Math.round(heartbeatGapMs)} ms`,
      );
      // The whole sentence was said (MS_PER_CHARACTER a character), without a stall of the audio.
      expect(spokenMs).toBeGreaterThan(SPEECH.length * MS_PER_CHARACTER * 0.9);
      expect(gapMs).toBeLessThan(MAX_GAP_MS);
      // Admission counts a worker gone after HEARTBEAT_TTL_SECONDS without a beat.
      expect(heartbeatGapMs).toBeLessThan(HEARTBEAT_TTL_SECONDS * 1000);

      // The session ends under a second burst: its job process exits and must be reaped.
      const endedAt = performance.now();
      const second = loadApi(() => reaped);
      await visitor.leave();
      expect((await account.call('POST', `/v1/sessions/${first.session.room_name}/end`)).status).toBe(200);
      const exited = await eventually(
        () => warm.find((pid) => !jobProcesses().includes(pid)),
        40_000,
        "the session's job process to exit",
      );
      const state = await eventually(
        () => {
          const child = childStates().find((c) => c.pid === exited);
          return child?.state.startsWith('Z') ? undefined : (child?.state ?? 'reaped');
        },
        5_000,
        `job process ${exited} to be reaped`,
      );
      reaped = true;
      await second;
      console.log(
        `${engine}: the job process exited and was reaped ${Math.round(performance.now() - endedAt)} ms after the end`,
      );
      expect(state).toBe('reaped');
      // Extraction processes exit all the time under the load: none may stay a zombie.
      await eventually(() => !childStates().some((c) => c.state.startsWith('Z')), 3_000, 'no zombie child');
      expect(heartbeats.longestGapSince(endedAt)).toBeLessThan(HEARTBEAT_TTL_SECONDS * 1000);
    } finally {
      spoken = reaped = true;
      heartbeats.restore();
      if (visitor.room.isConnected) await visitor.leave();
    }

    // After the bursts: admitted, and its agent joins.
    const next = await start();
    const visitor2 = await joinAsVisitor(next.session, { audioOnly: true });
    try {
      await eventually(() => visitor2.agent(), 30_000, 'the second session’s agent');
      console.log(
        `${engine}: second session start → agent in the room ${Math.round(performance.now() - next.startedAt)} ms`,
      );
    } finally {
      await visitor2.leave();
      await account.call('POST', `/v1/sessions/${next.session.room_name}/end`);
    }
  }, 180_000);
});
