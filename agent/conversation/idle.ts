// A visitor who went quiet (docs/api.md#sessions-idle): after the session's
// `idle_timeout_seconds` without a visitor turn the agent asks, once, whether they are still
// there, in the language it speaks; after as long again without one, the job reports
// `visitor_idle` and the control plane ends the session (`idle`, a notice first). The count
// runs only while nobody is heard: it pauses while the visitor's voice is heard (a long
// sentence is not silence) and while the agent thinks or speaks (its own words, the question
// included, are not the visitor's silence), and starts again from zero at each visitor turn,
// spoken or typed, which also takes the question back.
import { voice } from '@livekit/agents';
import type { SpokenLanguage, VisitorIdleReport } from '../../src/contract/index.ts';
import type { AgentLogger } from '../logging.ts';
import { deliver, type MeterClock, type Reporter, systemClock } from '../reports/index.ts';

/** What the agent asks a quiet visitor: fixed sentences, like the greeting's (greeting.ts). */
export const IDLE_QUESTIONS: Record<SpokenLanguage, string> = {
  en: 'Are you still there?',
  es: '¿Sigues ahí?',
  pl: 'Czy nadal tam jesteś?',
  uk: 'Ви ще тут?',
};

export interface IdleTimerOptions {
  timeoutMs: number;
  clock: Pick<MeterClock, 'now' | 'setTimer'>;
  /** The first silence ran out: ask whether the visitor is still there. */
  ask(): void;
  /** The second one did too: the visitor is gone. Called once. */
  giveUp(): void;
}

/**
 * The two silences, on a clock of its own (tests step through them). Stopped until `start`,
 * and for good after `giveUp` or `stop`.
 */
export class IdleTimer {
  readonly #options: IdleTimerOptions;
  #stage: 'waiting' | 'silent' | 'asked' | 'done' = 'waiting';
  /** Silence counted before the current stretch. */
  #countedMs = 0;
  /** The current stretch of silence: since when, and its timer's cancel. */
  #running: { since: number; cancel: () => void } | null = null;
  #visitorSpeaking = false;
  #agentBusy = false;

  constructor(options: IdleTimerOptions) {
    this.#options = options;
  }

  /** Whether the question was asked and no visitor turn came since. */
  get asked(): boolean {
    return this.#stage === 'asked' || this.#stage === 'done';
  }

  /** Silence counted so far in the current stage, in ms. */
  get silentMs(): number {
    return this.#countedMs + (this.#running ? this.#options.clock.now() - this.#running.since : 0);
  }

  start(): void {
    if (this.#stage !== 'waiting') return;
    this.#stage = 'silent';
    this.#update();
  }

  /** The visitor said or typed something: the count starts again, and the question is taken back. */
  visitorTurn(): void {
    if (this.#stage === 'done') return;
    if (this.#stage === 'asked') this.#stage = 'silent';
    this.#pause();
    this.#countedMs = 0;
    this.#update();
  }

  visitorSpeaking(speaking: boolean): void {
    this.#visitorSpeaking = speaking;
    this.#update();
  }

  /** The agent thinks or speaks: that time is not the visitor's silence. */
  agentBusy(busy: boolean): void {
    this.#agentBusy = busy;
    this.#update();
  }

  stop(): void {
    this.#pause();
    this.#stage = 'done';
  }

  #update(): void {
    const counting =
      (this.#stage === 'silent' || this.#stage === 'asked') && !this.#visitorSpeaking && !this.#agentBusy;
    if (counting && !this.#running) {
      const since = this.#options.clock.now();
      const cancel = this.#options.clock.setTimer(this.#options.timeoutMs - this.#countedMs, () => this.#ranOut());
      this.#running = { since, cancel };
    } else if (!counting) this.#pause();
  }

  #pause(): void {
    if (!this.#running) return;
    this.#running.cancel();
    this.#countedMs += this.#options.clock.now() - this.#running.since;
    this.#running = null;
  }

  #ranOut(): void {
    this.#running = null;
    this.#countedMs = 0;
    if (this.#stage === 'silent') {
      this.#stage = 'asked';
      this.#update();
      this.#options.ask();
    } else if (this.#stage === 'asked') {
      this.#stage = 'done';
      this.#options.giveUp();
    }
  }
}

export interface IdleWatchOptions {
  session: voice.AgentSession;
  /** The session's `idle_timeout_seconds`; 0 watches nothing. */
  timeoutSeconds: number;
  /** The language the agent speaks now (pinned, or the visitor's in auto mode). */
  language(): SpokenLanguage;
  reporter: Reporter<VisitorIdleReport>;
  logger: Pick<AgentLogger, 'info' | 'warn'>;
  clock?: Pick<MeterClock, 'now' | 'setTimer'>;
}

export interface IdleWatch {
  /** Begins counting: once the visitor was greeted (or, with no greeting, could hear the agent). */
  start(): void;
  close(): void;
}

/** Watches the session's visitor and agent, and asks, then reports, a visitor who went quiet. */
export function watchIdleVisitor(options: IdleWatchOptions): IdleWatch {
  const { session, logger } = options;
  if (!options.timeoutSeconds) return { start() {}, close() {} };
  const timer = new IdleTimer({
    timeoutMs: options.timeoutSeconds * 1000,
    clock: options.clock ?? systemClock,
    ask() {
      const language = options.language();
      logger.info({ language }, 'the visitor is quiet: asking whether they are still there');
      try {
        session.say(IDLE_QUESTIONS[language]);
      } catch (error) {
        // The session is closing: nobody to ask.
        logger.info({ err: error }, 'the idle question could not be said');
      }
    },
    giveUp() {
      logger.info({ timeout_seconds: options.timeoutSeconds }, 'the visitor stayed quiet: reporting it idle');
      void deliver(options.reporter, { type: 'visitor_idle' }).then((delivered) => {
        if (!delivered) logger.warn('the idle visitor could not be reported');
      });
    },
  });
  const onUser = (event: voice.UserStateChangedEvent) => timer.visitorSpeaking(event.newState === 'speaking');
  const onAgent = (event: voice.AgentStateChangedEvent) =>
    timer.agentBusy(event.newState === 'thinking' || event.newState === 'speaking');
  const onItem = (event: voice.ConversationItemAddedEvent) => {
    if (event.item.type === 'message' && event.item.role === 'user') timer.visitorTurn();
  };
  session.on(voice.AgentSessionEventTypes.UserStateChanged, onUser);
  session.on(voice.AgentSessionEventTypes.AgentStateChanged, onAgent);
  session.on(voice.AgentSessionEventTypes.ConversationItemAdded, onItem);
  return {
    start: () => timer.start(),
    close() {
      timer.stop();
      session.off(voice.AgentSessionEventTypes.UserStateChanged, onUser);
      session.off(voice.AgentSessionEventTypes.AgentStateChanged, onAgent);
      session.off(voice.AgentSessionEventTypes.ConversationItemAdded, onItem);
    },
  };
}
