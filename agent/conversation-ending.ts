// How a job's conversation ends. What it leaves behind (its summary, outcome, memory) is written
// once, as soon as the room is gone: agents' shutdown calls its callbacks only after waiting for
// the entry function (up to 15 s) and the session's close (up to 60 s), which need not delay the
// summary. Then the job's shutdown is told the room is gone (job-shutdown.ts), so that a hung
// close cannot hold the process. Set up before the conversation starts: it waits for the
// visitor, who may never come.
import { RoomEvent } from '@livekit/rtc-node';
import { stoppedByWorker } from './agents-adapter/index.ts';
import { type LivekitAccess, reportAfterwards } from './conversation/afterwards.ts';
import type { Conversation } from './conversation/index.ts';
import type { JobShutdown } from './job-shutdown.ts';
import type { AgentLogger } from './logging.ts';
import type { Reporter } from './reports/index.ts';

/** A conversation gets this long to close (last transcript turns included) before the job leaves anyway. */
const CONVERSATION_CLOSE_MS = 5_000;

async function closeWithin(conversation: Conversation | undefined, ms: number, logger: AgentLogger): Promise<void> {
  if (!conversation) return;
  const closed = await Promise.race([conversation.close().then(() => true), Bun.sleep(ms).then(() => false)]);
  if (!closed) logger.warn({ timeout_ms: ms }, 'the conversation did not close in time; leaving anyway');
}

export interface ConversationEndingDeps {
  /** The job's room: its disconnect is the end. */
  room: { once(event: RoomEvent.Disconnected, listener: () => void): unknown };
  access: LivekitAccess;
  sessionId: string;
  logger: AgentLogger;
  reporter: Reporter;
  shutdown: JobShutdown;
}

export interface ConversationEnding {
  /** The job is ending: no conversation should start. */
  leaving(): boolean;
  /** The conversation runs; one that started as the job was ending is closed at once. */
  began(started: Conversation): Promise<void>;
}

export function endingOfConversation({
  room,
  access,
  sessionId,
  logger,
  reporter,
  shutdown,
}: ConversationEndingDeps): ConversationEnding {
  let conversation: Conversation | undefined;
  let leaving = false;
  let leftBehind: Promise<void> | undefined;
  const leaveBehind = async () => {
    if (!conversation) return;
    const closing = conversation;
    leftBehind ??= closeWithin(closing, CONVERSATION_CLOSE_MS, logger).then(() =>
      reportAfterwards({ afterwards: closing, access, roomName: sessionId, stoppedByWorker, reporter, logger }),
    );
    await leftBehind;
  };
  room.once(RoomEvent.Disconnected, () => void leaveBehind().finally(() => shutdown.roomGone()));
  shutdown.add(async () => {
    leaving = true;
    await leaveBehind();
  });
  return {
    leaving: () => leaving,
    async began(started) {
      conversation = started;
      if (leaving) await closeWithin(started, CONVERSATION_CLOSE_MS, logger);
    },
  };
}
