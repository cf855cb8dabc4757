// The ramp's visitors, in a process of their own (bench/renderer/index.ts spawns it): joining
// rooms, receiving and decoding the avatars' video, and asking a question every `turnEveryMs`
// so each avatar alternates between listening and speaking as in a conversation. Its CPU is
// reported apart from the service's (a real visitor's decoding happens on their own device).
// Messages in (IPC): { join: StartedSession, index }, { ask: index } (one question now),
// { turns: true } (every visitor asks every BENCH_TURN_EVERY_MS from now on, staggered),
// { decoded: true }, { stop: true }. Out: { ready }, then one answer to each: { joined: index }
// once the video track arrived, { asked }, { turning }, { decoded: number[], captions: number[] }
// (the agent's caption segments so far, per visitor: the avatars did answer), or { error }.
import { initializeLogger } from '@livekit/agents';
import { TrackKind } from '@livekit/rtc-node';
import { agentCaptions } from '../../test/support/talking-visitor.ts';
import { eventually, joinAsVisitor, type StartedSession, type Visitor } from '../../test/support/visitor.ts';
import { Microphone, speech } from '../../test/support/voice.ts';

interface Joined {
  visitor: Visitor;
  microphone: Microphone;
  /** The agent's caption segments so far: one or more per reply (the avatar did speak). */
  captions: () => string[];
  timer?: ReturnType<typeof setTimeout>;
}

interface Message {
  join?: StartedSession;
  index?: number;
  ask?: number;
  turns?: true;
  decoded?: true;
  stop?: true;
}

initializeLogger({ pretty: false, level: 'error' });

const TURN_EVERY_MS = Number(process.env.BENCH_TURN_EVERY_MS ?? 0);
/** Microphones that send encoded silence between questions, instead of only their speech (as a browser with DTX). */
const SEND_SILENCE = process.env.BENCH_VISITORS_SEND_SILENCE === '1';
const joined: Joined[] = [];
const question = await speech('Could you tell me more about that, please?');

let turning = false;

/** From now on this visitor asks every TURN_EVERY_MS, staggered by its index so turns do not coincide. */
function takeTurns(entry: Joined, index: number): void {
  const ask = () => {
    void entry.microphone.say(question);
    entry.timer = setTimeout(ask, TURN_EVERY_MS);
  };
  entry.timer = setTimeout(ask, (index * 0.37 * TURN_EVERY_MS) % TURN_EVERY_MS);
}

process.on('message', async (message: Message) => {
  try {
    if (message.join) {
      const visitor = await joinAsVisitor(message.join);
      const captions = agentCaptions(visitor);
      // 20 ms frames, as a browser's microphone sends them: half the calls of the tests' 10 ms.
      const microphone = await Microphone.publish(visitor.room, { frameMs: 20, quiet: !SEND_SILENCE });
      await eventually(() => visitor.tracks.find((t) => t.kind === TrackKind.KIND_VIDEO), 30_000, 'the avatar video');
      const entry: Joined = { visitor, microphone, captions };
      joined.push(entry);
      if (turning) takeTurns(entry, joined.length - 1);
      process.send?.({ joined: message.index });
    } else if (message.ask !== undefined) {
      void joined[message.ask]?.microphone.say(question);
      process.send?.({ asked: message.ask });
    } else if (message.turns) {
      turning = TURN_EVERY_MS > 0;
      if (turning) for (const [index, entry] of joined.entries()) takeTurns(entry, index);
      process.send?.({ turning });
    } else if (message.decoded) {
      process.send?.({
        decoded: await Promise.all(joined.map((j) => framesDecoded(j.visitor))),
        captions: joined.map((j) => j.captions().length),
      });
    } else if (message.stop) {
      for (const j of joined) {
        clearTimeout(j.timer);
        await j.microphone.stop().catch(() => undefined);
        await j.visitor.leave().catch(() => undefined);
      }
      process.exit(0);
    }
  } catch (error) {
    process.send?.({ error: (error as Error).message });
  }
});
process.send?.({ ready: true });

/** Video frames the visitor's WebRTC stack decoded so far (its inbound-rtp stats). */
async function framesDecoded(visitor: Visitor): Promise<number> {
  const stats = await visitor.room.getRtcStats();
  let decoded = 0;
  // LiveKit 1.13 may carry both directions on one peer connection, reported as the publisher's.
  for (const entry of [...stats.subscriberStats, ...stats.publisherStats]) {
    if (entry.stats.case === 'inboundRtp' && entry.stats.value.stream?.kind === 'video')
      decoded += entry.stats.value.inbound?.framesDecoded ?? 0;
  }
  return decoded;
}
