// The contract between the control plane (src/) and the agent (agent/): everything the two
// processes, and the clients in a session's room, must agree on, defined once. Both sides
// import it; it imports nothing of either (test/architecture/import-rules.test.ts keeps it so).
//
//   languages.ts     the language modes, and the ones the agent speaks
//   avatar-video.ts  form factors, avatar shapes and the rule between them, fps, video codecs, frame sizes, sample rate
//   pipelines.ts     the built-in and hosted pipelines' ids
//   face-rig.ts      the built-in pipeline's rig file format, its version and asset names
//   wire-names.ts    track names, data topics and LiveKit attributes in the room
//   notices.ts       the in-room notices the service sends before a session ends
//   dispatch.ts      the metadata each agent job is dispatched with, and the session room's metadata
//   job-reports.ts   what a job reports back: streaming, minutes, the visitor leaving, transcript turns,
//                    orders taken, an idle visitor, the summary, the outcome, the visitor's memory
//   outcomes.ts      a session's outcome: the shape every written one has
//   visitor-memory.ts  what is remembered of a returning visitor: its bounds, the dispatch's facts, the job's report
//   agent-tools.ts   the tools the agent may call: their definition, a webhook call's request and answer, the record
//   knowledge.ts     the passages retrieved for each visitor turn
//   recordings.ts    a session's recording: its statuses, and the chunks a job sends of it
//   session-direction.ts  a session's context and greeting, the orders say / interrupt / context, their limits
//   worker-heartbeat.ts  what each worker reports: its capacity and running sessions, for admission
//   hashing.ts       the SHA-256 (hex) secrets are kept and compared as: the report token's on both
//                    sides, API keys', browser sessions', counted keys' in the control plane
//   webhook-events.ts    the events a customer's webhook can subscribe to (the API and the console's form)
//   schema-parts.ts      TypeBox pieces the messages above are built from
//
// This file re-exports all but the last two, which their users import directly.
//
// Browsers import some of these files directly (wire-names, languages, webhook-events): those
// stay constants only.
export * from './agent-tools.ts';
export * from './avatar-video.ts';
export * from './dispatch.ts';
export * from './face-rig.ts';
export * from './hashing.ts';
export * from './job-reports.ts';
export * from './knowledge.ts';
export * from './languages.ts';
export * from './notices.ts';
export * from './outcomes.ts';
export * from './pipelines.ts';
export * from './recordings.ts';
export { Timestamp } from './schema-parts.ts';
export * from './session-direction.ts';
export * from './visitor-memory.ts';
export * from './wire-names.ts';
export * from './worker-heartbeat.ts';
