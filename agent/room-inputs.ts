// What a session's room may deliver to its job: the text and byte stream topics and the RPC
// methods the job serves (docs/api.md#in-room), and nothing else. The visitor's token can send
// streams on any topic and call any method, and the agents framework registers handlers of its
// own that change from version to version (1.9's remote-session host answered the visitor with
// the agent's whole prompt on `lk.agent.session`). So a handler for anything not listed here is
// refused at registration, whoever asks for it: a stream on such a topic finds no handler and
// rtc-node drops it unread, and a call to such a method is answered "unsupported method".
import type { Room } from '@livekit/rtc-node';
import { CHAT_TOPIC, CONTEXT_METHOD, INTERRUPT_METHOD, SAY_METHOD } from '../src/contract/index.ts';
import type { AgentLogger } from './logging.ts';

export interface ServedInputs {
  textTopics: readonly string[];
  byteTopics: readonly string[];
  rpcMethods: readonly string[];
}

/**
 * What a job serves: typed chat from the visitor, the visitor's app's orders (say, interrupt,
 * context: refused unless the session's `client_control` allows them, conversation/orders.ts),
 * and the two calls of agents' avatar protocol an avatar service makes back (agents'
 * DataStreamAudioOutput answers only the avatar's own participant; the rest "reject"). Data
 * packets are not fenced here: the job listens to one topic, the control plane's orders, and
 * takes only those with the session's proof (conversation/order-packets.ts).
 */
export const JOB_INPUTS: ServedInputs = {
  textTopics: [CHAT_TOPIC],
  byteTopics: [],
  rpcMethods: ['lk.playback_finished', 'lk.playback_started', SAY_METHOD, INTERRUPT_METHOD, CONTEXT_METHOD],
};

/** Makes `room` refuse every handler `served` does not list (call once it is connected). */
export function serveOnly(room: Room, served: ServedInputs, logger: Pick<AgentLogger, 'warn'>): void {
  const refused = (input: 'text_topic' | 'byte_topic' | 'rpc_method', name: string) =>
    logger.warn({ input, name }, 'a handler for a room input this job does not serve was refused');
  const registerText = room.registerTextStreamHandler.bind(room);
  room.registerTextStreamHandler = (topic, handler) =>
    served.textTopics.includes(topic) ? registerText(topic, handler) : refused('text_topic', topic);
  const registerBytes = room.registerByteStreamHandler.bind(room);
  room.registerByteStreamHandler = (topic, handler) =>
    served.byteTopics.includes(topic) ? registerBytes(topic, handler) : refused('byte_topic', topic);
  const local = room.localParticipant;
  if (!local) throw new Error('serveOnly needs a connected room');
  const registerRpc = local.registerRpcMethod.bind(local);
  local.registerRpcMethod = (method, handler) =>
    served.rpcMethods.includes(method) ? registerRpc(method, handler) : refused('rpc_method', method);
}
