// A visitor who went quiet (agent/conversation/idle.ts), on a clock that moves only when told
// to: asked once after the timeout of silence, reported after as long again; the count pauses
// while anyone is heard and starts again at each visitor turn. The session's own end-to-end
// runs are the idle tests of test/conversation/session-direction.test.ts; the control plane's
// side is test/sessions/idle-ending.test.ts.

import { describe, expect, test } from 'bun:test';
import { EventEmitter } from 'node:events';
import { voice } from '@livekit/agents';
import { IDLE_QUESTIONS, IdleTimer, watchIdleVisitor } from '../../agent/conversation/idle.ts';
import type { SpokenLanguage, VisitorIdleReport } from '../../src/contract/index.ts';

/** Time that moves only when told to, firing due timers in order. */
class FakeClock {
  #now = 0;
  #timers: { at: number; callback: () => void }[] = [];

  now(): number {
    return this.#now;
  }

  setTimer(delayMs: number, callback: () => void): () => void {
    const timer = { at: this.#now + Math.max(0, delayMs), callback };
    this.#timers.push(timer);
    return () => {
      this.#timers = this.#timers.filter((t) => t !== timer);
    };
  }

  advance(ms: number): void {
    const target = this.#now + ms;
    for (;;) {
      const next = this.#timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.#timers = this.#timers.filter((t) => t !== next);
      this.#now = next.at;
      next.callback();
    }
    this.#now = target;
  }

  get pending(): number {
    return this.#timers.length;
  }
}

function timerOn(clock: FakeClock, timeoutMs = 10_000) {
  const events: string[] = [];
  const timer = new IdleTimer({
    timeoutMs,
    clock,
    ask: () => events.push(`ask@${clock.now()}`),
    giveUp: () => events.push(`idle@${clock.now()}`),
  });
  return { timer, events };
}

describe('the idle timer', () => {
  test('asks after the timeout of silence, gives up after as long again, once', () => {
    const clock = new FakeClock();
    const { timer, events } = timerOn(clock);
    clock.advance(60_000);
    expect(events).toEqual([]); // not started: the greeting is still on its way
    timer.start();
    clock.advance(9_999);
    expect(events).toEqual([]);
    clock.advance(1);
    expect(events).toEqual(['ask@70000']);
    expect(timer.asked).toBe(true);
    clock.advance(10_000);
    expect(events).toEqual(['ask@70000', 'idle@80000']);
    clock.advance(100_000);
    expect(events).toHaveLength(2);
    expect(clock.pending).toBe(0);
  });

  test('a visitor turn starts the count again and takes the question back', () => {
    const clock = new FakeClock();
    const { timer, events } = timerOn(clock);
    timer.start();
    clock.advance(8_000);
    timer.visitorTurn();
    clock.advance(8_000);
    expect(events).toEqual([]);
    clock.advance(2_000);
    expect(events).toEqual(['ask@18000']);
    // They answer the question: a full silence again before it is asked again, not the end.
    clock.advance(5_000);
    timer.visitorTurn();
    expect(timer.asked).toBe(false);
    clock.advance(9_999);
    expect(events).toEqual(['ask@18000']);
    clock.advance(1);
    expect(events).toEqual(['ask@18000', 'ask@33000']);
    clock.advance(10_000);
    expect(events).toEqual(['ask@18000', 'ask@33000', 'idle@43000']);
  });

  test("the count pauses while the agent thinks or speaks, the question's own playout included", () => {
    const clock = new FakeClock();
    const { timer, events } = timerOn(clock);
    timer.start();
    clock.advance(4_000);
    timer.agentBusy(true); // an order from the API says something: not the visitor's silence, nor their turn
    clock.advance(30_000);
    timer.agentBusy(false);
    expect(timer.silentMs).toBe(4_000);
    clock.advance(6_000);
    expect(events).toEqual(['ask@40000']);
    timer.agentBusy(true); // the question is spoken
    clock.advance(2_000);
    timer.agentBusy(false);
    clock.advance(9_999);
    expect(events).toEqual(['ask@40000']);
    clock.advance(1);
    expect(events).toEqual(['ask@40000', 'idle@52000']);
  });

  test('the visitor speaking pauses it; words without a turn (noise) do not restart it', () => {
    const clock = new FakeClock();
    const { timer, events } = timerOn(clock);
    timer.start();
    clock.advance(6_000);
    timer.visitorSpeaking(true);
    clock.advance(20_000); // a long sentence is not silence
    timer.visitorSpeaking(false);
    expect(events).toEqual([]);
    expect(timer.silentMs).toBe(6_000);
    clock.advance(4_000);
    expect(events).toEqual(['ask@30000']);
  });

  test('stopped (the session closed), it asks and reports nothing', () => {
    const clock = new FakeClock();
    const { timer, events } = timerOn(clock);
    timer.start();
    clock.advance(5_000);
    timer.stop();
    clock.advance(100_000);
    timer.visitorTurn();
    timer.start();
    clock.advance(100_000);
    expect(events).toEqual([]);
    expect(clock.pending).toBe(0);
  });
});

/** Just enough of an AgentSession: its events, and what it was told to say. */
class FakeSession extends EventEmitter {
  said: string[] = [];
  say(text: string) {
    this.said.push(text);
    return {};
  }
  emitUser(newState: 'speaking' | 'listening') {
    this.emit(voice.AgentSessionEventTypes.UserStateChanged, { newState });
  }
  emitAgent(newState: 'thinking' | 'speaking' | 'listening') {
    this.emit(voice.AgentSessionEventTypes.AgentStateChanged, { newState });
  }
  emitItem(role: 'user' | 'assistant') {
    this.emit(voice.AgentSessionEventTypes.ConversationItemAdded, { item: { type: 'message', role } });
  }
}

const quiet = { info() {}, warn() {} };

function watchOn(session: FakeSession, clock: FakeClock, timeoutSeconds: number, language: SpokenLanguage = 'en') {
  const reports: VisitorIdleReport[] = [];
  const watch = watchIdleVisitor({
    session: session as unknown as voice.AgentSession,
    timeoutSeconds,
    language: () => language,
    reporter: async (report) => {
      reports.push(report);
      return 'accepted';
    },
    logger: quiet,
    clock,
  });
  return { watch, reports };
}

describe("the session's idle watch", () => {
  test("asks in the agent's language, reports `visitor_idle`; the agent's speech and the visitor's turns count", async () => {
    const clock = new FakeClock();
    const session = new FakeSession();
    const { watch, reports } = watchOn(session, clock, 3, 'pl');
    watch.start();
    clock.advance(2_000);
    session.emitUser('speaking');
    clock.advance(5_000);
    session.emitUser('listening');
    session.emitItem('user'); // their words were transcribed: a turn
    session.emitAgent('thinking');
    session.emitAgent('speaking');
    session.emitItem('assistant'); // the reply is no visitor turn
    clock.advance(10_000);
    session.emitAgent('listening');
    expect(session.said).toEqual([]);
    clock.advance(3_000);
    expect(session.said).toEqual([IDLE_QUESTIONS.pl]);
    session.emitAgent('speaking');
    clock.advance(1_500);
    session.emitAgent('listening');
    clock.advance(2_999);
    await Bun.sleep(0);
    expect(reports).toEqual([]);
    clock.advance(1);
    await Bun.sleep(0);
    expect(reports).toEqual([{ type: 'visitor_idle' }]);
    watch.close();
  });

  test('0 watches nothing', async () => {
    const clock = new FakeClock();
    const session = new FakeSession();
    const { watch, reports } = watchOn(session, clock, 0);
    watch.start();
    clock.advance(24 * 3600_000);
    await Bun.sleep(0);
    expect(session.said).toEqual([]);
    expect(reports).toEqual([]);
    expect(session.listenerCount(voice.AgentSessionEventTypes.ConversationItemAdded)).toBe(0);
  });

  test('closed, it stops listening to the session', () => {
    const clock = new FakeClock();
    const session = new FakeSession();
    const { watch } = watchOn(session, clock, 3);
    watch.start();
    watch.close();
    expect(session.listenerCount(voice.AgentSessionEventTypes.UserStateChanged)).toBe(0);
    expect(session.listenerCount(voice.AgentSessionEventTypes.AgentStateChanged)).toBe(0);
    clock.advance(60_000);
    expect(session.said).toEqual([]);
  });

  test('a question for every spoken language', () => {
    for (const question of Object.values(IDLE_QUESTIONS)) expect(question).toMatch(/\?$/);
    expect(Object.keys(IDLE_QUESTIONS).sort()).toEqual(['en', 'es', 'pl', 'uk']);
  });
});
