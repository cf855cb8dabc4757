// How a job's conversation ends (agent/conversation-ending.ts): when the room is gone, the
// conversation closes, what it leaves behind is reported, and only then is the job's shutdown
// told the room is gone (which bounds how long agents may hold the process); agents' own
// shutdown closes it too, once; a conversation that starts as the job leaves is closed at once.
// The room also counts as gone when LiveKit no longer has it while the job's connection
// reconnects, or when the worker stops the job after its deletion; not when it is still there.
import { describe, expect, test } from 'bun:test';
import { EventEmitter } from 'node:events';
import { RoomEvent } from '@livekit/rtc-node';
import type { Conversation } from '../../agent/conversation/index.ts';
import { endingOfConversation } from '../../agent/conversation-ending.ts';
import type { JobShutdown } from '../../agent/job-shutdown.ts';
import type { JobReport } from '../../src/contract/job-reports.ts';
import { recordingLogger } from '../support/agent-log.ts';

/** What happened, in order: the conversation's close, the reports, the shutdown's calls. */
function scene(livekit: { hasRoom: boolean | undefined } = { hasRoom: undefined }) {
  const events: string[] = [];
  const stopListeners: (() => void)[] = [];
  let asked = 0;
  const works: (() => unknown)[] = [];
  const shutdown: JobShutdown = {
    add: (work) => void works.push(work),
    roomGone: () => void events.push('room gone'),
  };
  const room = new EventEmitter();
  const ending = endingOfConversation({
    room,
    // No LiveKit credentials: the session counts as over unless the worker stopped the job.
    access: { url: 'ws://127.0.0.1:1', apiKey: '', apiSecret: '' },
    sessionId: 'ses_ending',
    logger: recordingLogger(),
    reporter: async (report: JobReport) => {
      events.push(`report ${report.type}`);
      return 'accepted';
    },
    shutdown,
    onStopRequested: (listener) => void stopListeners.push(listener),
    hasRoom: async () => {
      asked++;
      return livekit.hasRoom;
    },
  });
  const conversation = {
    close: async () => {
      await Bun.sleep(20);
      events.push('closed');
    },
    summary: async () => ({ type: 'summary', text: 'They asked about opening hours.' }),
    outcome: async () => null,
    memory: async () => null,
  } as unknown as Conversation;
  return {
    events,
    ending,
    conversation,
    roomDisconnected: () => room.emit(RoomEvent.Disconnected),
    reconnecting: () => room.emit(RoomEvent.Reconnecting),
    reconnected: () => room.emit(RoomEvent.Reconnected),
    stopRequested: () => {
      for (const listener of stopListeners) listener();
    },
    asked: () => asked,
    agentsShutdown: () => Promise.all(works.map((work) => work())),
  };
}

const settled = () => Bun.sleep(100);

/** A conversation whose connection began reconnecting while LiveKit still had the room (`livekit` says what it has next). */
async function reconnectingScene() {
  const livekit = { hasRoom: true as boolean | undefined };
  const started = scene(livekit);
  await started.ending.began(started.conversation);
  started.reconnecting();
  await settled();
  return { ...started, livekit };
}

describe('a conversation’s ending', () => {
  test('the room gone: closed, its summary reported, then the shutdown is told', async () => {
    const { events, ending, conversation, roomDisconnected } = scene();
    await ending.began(conversation);
    roomDisconnected();
    await settled();
    expect(events).toEqual(['closed', 'report summary', 'room gone']);
    expect(ending.leaving()).toBe(false);
  });

  test('a room gone before any conversation: the shutdown is told at once', async () => {
    const { events, roomDisconnected } = scene();
    roomDisconnected();
    await settled();
    expect(events).toEqual(['room gone']);
  });

  test('agents’ shutdown after the room is gone: nothing is closed or reported twice', async () => {
    const { events, ending, conversation, roomDisconnected, agentsShutdown } = scene();
    await ending.began(conversation);
    roomDisconnected();
    await agentsShutdown();
    await settled();
    expect(events).toEqual(['closed', 'report summary', 'room gone']);
    expect(ending.leaving()).toBe(true);
  });

  test('a conversation that starts as the job leaves is closed at once', async () => {
    const { events, ending, conversation, agentsShutdown } = scene();
    await agentsShutdown();
    expect(ending.leaving()).toBe(true);
    await ending.began(conversation);
    expect(events).toEqual(['closed']);
  });

  test('reconnecting when LiveKit has deleted the room: ended as if disconnected, once', async () => {
    const { events, livekit, roomDisconnected, asked } = await reconnectingScene();
    // Still there: the conversation goes on, LiveKit asked again a while later.
    expect(events).toEqual([]);
    expect(asked()).toBe(1);
    livekit.hasRoom = false;
    await Bun.sleep(2_200);
    expect(asked()).toBe(2);
    expect(events).toEqual(['closed', 'report summary', 'room gone']);
    roomDisconnected(); // the retries giving up at last
    await settled();
    expect(events).toEqual(['closed', 'report summary', 'room gone']);
  });

  test('reconnected, or LiveKit out of reach: the conversation goes on', async () => {
    const { events, livekit, reconnected, asked } = await reconnectingScene();
    reconnected();
    livekit.hasRoom = false; // deleted later: the connection itself will say so
    await Bun.sleep(2_200);
    expect(asked()).toBe(1); // no longer asking
    expect(events).toEqual([]);
    const unknown = scene({ hasRoom: undefined });
    await unknown.ending.began(unknown.conversation);
    unknown.reconnecting();
    await settled();
    expect(unknown.events).toEqual([]);
  });

  test('stopped by the worker: ended when the room was deleted, not in a drain', async () => {
    const deleted = scene({ hasRoom: false });
    await deleted.ending.began(deleted.conversation);
    deleted.stopRequested();
    await settled();
    expect(deleted.events).toEqual(['closed', 'report summary', 'room gone']);
    const drained = scene({ hasRoom: true });
    await drained.ending.began(drained.conversation);
    drained.stopRequested();
    await settled();
    expect(drained.events).toEqual([]);
  });
});
