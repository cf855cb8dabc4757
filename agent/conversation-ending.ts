// How a job's conversation ends. What it leaves behind (its summary, outcome, memory) is written
// once, as soon as the room is gone: agents' shutdown calls its callbacks only after waiting for
// the entry function (up to 15 s) and the session's close (up to 60 s), which need not delay the
// summary. Then the job's shutdown is told the room is gone (job-shutdown.ts), so that a hung
// close cannot hold the process. Set up before the conversation starts: it waits for the
// visitor, who may never come.
//
// The room is gone when the job's connection says so (Disconnected), and also when LiveKit no
// longer has it while that connection cannot say: reconnecting (it hears of the deletion only
// when its retries give up, about a minute; a CI run's outcome waited past 40 s so), or stopped
// by a request that a deleted room sends as a drain does.
import { RoomEvent } from '@livekit/rtc-node';
import { onStopRequested as onWorkerStop, stoppedByWorker } from './agents-adapter/index.ts';
import { reportAfterwards } from './conversation/afterwards.ts';
import type { Conversation } from './conversation/index.ts';
import type { JobShutdown } from './job-shutdown.ts';
import type { AgentLogger } from './logging.ts';
import type { Reporter } from './reports/index.ts';
import { type LivekitAccess, livekitHasRoom } from './room-at-livekit.ts';

/** A conversation gets this long to close (last transcript turns included) before the job leaves anyway. */
const CONVERSATION_CLOSE_MS = 5_000;
/** While the connection reconnects, LiveKit is asked this often whether the room is still there. */
const RECONNECTING_CHECK_MS = 2_000;

async function closeWithin(conversation: Conversation | undefined, ms: number, logger: AgentLogger): Promise<void> {
  if (!conversation) return;
  const closed = await Promise.race([conversation.close().then(() => true), Bun.sleep(ms).then(() => false)]);
  if (!closed) logger.warn({ timeout_ms: ms }, 'the conversation did not close in time; leaving anyway');
}

export interface ConversationEndingDeps {
  /** The job's room: its disconnect is the end; while it reconnects, LiveKit is asked. */
  room: {
    on(event: RoomEvent.Disconnected | RoomEvent.Reconnecting | RoomEvent.Reconnected, listener: () => void): unknown;
  };
  access: LivekitAccess;
  sessionId: string;
  logger: AgentLogger;
  reporter: Reporter;
  shutdown: JobShutdown;
  /** Calls its listener when the worker asks the job to stop (by default agents-adapter's). */
  onStopRequested?: (listener: () => void) => void;
  /** Whether LiveKit has the room (undefined: not known); asked `tries` times. */
  hasRoom?: (tries: number) => Promise<boolean | undefined>;
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
  onStopRequested = onWorkerStop,
  hasRoom = (tries) => livekitHasRoom(access, sessionId, logger, tries),
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
  let gone = false;
  const roomGone = () => {
    if (gone) return;
    gone = true;
    void leaveBehind().finally(() => shutdown.roomGone());
  };
  const goneAtLivekit = async (tries: number, why: string) => {
    if ((await hasRoom(tries)) !== false) return false;
    logger.info({ why }, 'LiveKit no longer has the room: the conversation ends');
    roomGone();
    return true;
  };
  room.on(RoomEvent.Disconnected, roomGone);
  let reconnecting = false;
  room.on(RoomEvent.Reconnected, () => {
    reconnecting = false;
  });
  const askWhileReconnecting = async () => {
    while (reconnecting && !gone && !(await goneAtLivekit(1, 'reconnecting'))) await Bun.sleep(RECONNECTING_CHECK_MS);
  };
  room.on(RoomEvent.Reconnecting, () => {
    if (reconnecting) return;
    reconnecting = true;
    void askWhileReconnecting();
  });
  onStopRequested(() => void goneAtLivekit(3, 'stop requested'));
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
