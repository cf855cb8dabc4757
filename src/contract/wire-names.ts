// Every name a session's room carries that two parties must spell alike: the tracks the
// agent publishes and clients attach, the data topics, and the LiveKit attributes we read or
// set, and the room metadata's key for a recorded session. Browsers import this file too (the console,
// examples/web-client): constants only.

/** The avatar's video track. */
export const AVATAR_VIDEO_TRACK = 'avatar';
/** The avatar's voice: speech leaves with the frame it belongs to. */
export const AVATAR_AUDIO_TRACK = 'avatar_audio';
/** The agent's voice in a session without an avatar; never played beside `avatar_audio`. */
export const VOICE_TRACK = 'agent_voice';

/**
 * The key of the room's metadata (JSON) that says a session is recorded: `true` from the room's
 * creation, absent otherwise. Every client shows a visible "Recording" mark while it is set.
 */
export const RECORDING_METADATA_KEY = 'recording';

/** Reliable data messages from the service to the room (notices.ts says what they carry). */
export const NOTICE_TOPIC = 'likeness.notice';

/** What the visitor types: a text stream, as LiveKit's chat components send it (agents' TOPIC_CHAT). */
export const CHAT_TOPIC = 'lk.chat';

/** LiveKit Agents' text stream of transcriptions, the visitor's and the agent's. */
export const TRANSCRIPTION_TOPIC = 'lk.transcription';
/** Attributes of a transcription stream (agents' own names). */
export const TRANSCRIPTION_SEGMENT_ID = 'lk.segment_id';
export const TRANSCRIPTION_FINAL = 'lk.transcription_final';
/** The track a transcription was heard on: the visitor's microphone for their own words. */
export const TRANSCRIBED_TRACK_ID = 'lk.transcribed_track_id';

/** The agent's state (`initializing`, `listening`, `thinking`, `speaking`), as LiveKit's agents set it (ATTRIBUTE_AGENT_STATE). */
export const AGENT_STATE_ATTRIBUTE = 'lk.agent.state';

/** LiveKit's attribute naming the agent an avatar participant publishes for (agents' ATTRIBUTE_PUBLISH_ON_BEHALF). */
export const PUBLISH_ON_BEHALF = 'lk.publish_on_behalf';

/**
 * Orders from the customer's backend to the session's agent (docs/api.md#sessions-direct):
 * reliable data messages the control plane sends through LiveKit's server API to the agent
 * participant alone. Their shape is session-direction.ts's `SessionOrder`; the agent takes only
 * those with the session's `proof` (orderProof): a packet's missing sender does not tell the
 * server's from a participant's the agent's room does not list yet or any more.
 */
export const ORDER_TOPIC = 'likeness.order';

/**
 * The same orders from the visitor's app, as LiveKit RPC methods on the agent participant,
 * taken when the session's `client_control` is true (payloads: session-direction.ts).
 */
export const SAY_METHOD = 'likeness.say';
export const INTERRUPT_METHOD = 'likeness.interrupt';
export const CONTEXT_METHOD = 'likeness.context';
