// What the visitor hears first, once they can hear it: a recorded session's notice, then the
// greeting (greeting.ts), voiced ahead when it could be (prepared-greeting.ts). A visitor who
// spoke or typed first is answered instead of greeted.
import type { voice } from '@livekit/agents';
import type { ParsedDispatch } from '../../src/contract/index.ts';
import type { AgentLogger } from '../logging.ts';
import { plannedGreeting, recordingNotice } from './greeting.ts';
import { type PreparedGreeting, playable } from './prepared-greeting.ts';

/**
 * How long the greeting waits for the visitor to hear the agent. Usually a few hundred ms;
 * a client that never subscribes (a bot, a broken one) is greeted anyway.
 */
const GREETING_WAIT_MS = 3_000;
/**
 * …and then this long: the visitor's first video frame (a keyframe, encoded and sent on
 * request once they subscribe) comes first, and the greeting's synthesis, which starts the
 * moment it is said, does not take the CPU that frame needs (measured, docs/benchmarks.md).
 */
const GREETING_AFTER_HEARD_MS = 400;
/** …or this long when its voice was made ahead (prepared-greeting.ts): only the frame's own time. */
const PREPARED_GREETING_AFTER_HEARD_MS = 100;

export interface FirstWordsOptions {
  session: voice.AgentSession;
  metadata: ParsedDispatch;
  /** Settles once the visitor can hear the agent (at most GREETING_WAIT_MS is waited). */
  audible: Promise<void>;
  greetingVoice?: Promise<PreparedGreeting | null>;
  /** Once the greeting was spoken (or, with none, the notice): the greeting said ("" for none). */
  afterGreeting(greeting: string): void;
  /** When the greeting could not be spoken to its end. */
  notGreeted(): void;
  logger: AgentLogger;
}

/** Says the notice and the greeting; resolves once they are said (not spoken). */
export async function sayFirstWords(options: FirstWordsOptions): Promise<void> {
  const { session, metadata, logger } = options;
  // Spoken once the visitor hears us: earlier, its first words would be lost, and during a
  // burst its synthesis would take the CPU the visitors' first frames need.
  await Promise.race([options.audible, Bun.sleep(GREETING_WAIT_MS)]);
  // Voiced ahead (prepared-greeting.ts), or still being voiced: a synthesis under way is ahead of
  // a new one, and a voice made takes no CPU from the visitor's first frame, which need not be waited for.
  const prepared = await options.greetingVoice;
  const preparedFrames = prepared ? await prepared.frames : null;
  await Bun.sleep(preparedFrames ? PREPARED_GREETING_AFTER_HEARD_MS : GREETING_AFTER_HEARD_MS);
  try {
    // The start's greeting is said as given; "" says nothing until the visitor speaks. A
    // visitor who spoke or typed first is answered instead: a greeting after that answer reads
    // as the agent starting over.
    const visitorFirst = session.history.items.some((item) => item.type === 'message' && item.role === 'user');
    const greeting = visitorFirst ? '' : plannedGreeting(metadata);
    const voiced = greeting && greeting === prepared?.text ? preparedFrames : null;
    // A recorded session's notice comes first, whole (not interruptible), even to a visitor
    // who spoke first or a session without a greeting: they are told before anything else.
    const notice = recordingNotice(metadata);
    const noticed = notice ? session.say(notice, { allowInterruptions: false }).waitForPlayout() : Promise.resolve();
    noticed.catch(() => undefined);
    const greeted = greeting
      ? session.say(greeting, voiced ? { audio: playable(voiced) } : undefined).waitForPlayout()
      : noticed;
    void greeted.then(
      () => options.afterGreeting(greeting),
      () => options.notGreeted(),
    );
  } catch (error) {
    // The session closed while waiting (the visitor left at once): nobody to greet.
    logger.info({ err: error }, 'no greeting');
  }
}
