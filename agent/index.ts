// The LiveKit Agents side of Likeness: a worker registered for explicit dispatch under
// AGENT_NAME, whose jobs (agent/job.ts, one process each) render the avatar into the
// session's room, hold the conversation and report streaming minutes and transcript turns to
// the control plane. What a job is given and reports is src/contract (dispatch.ts,
// job-reports.ts); the agent imports only that contract and src/config.ts.
//
//   worker.ts       registers with LiveKit, forks a process per job
//   job.ts          one session: joins the room, starts the avatar and the conversation
//   conversation-ending.ts  the room gone: the conversation closed, what it leaves behind reported
//   job-shutdown.ts the job's shutdown work, run once (by agents, or by the job when agents is held)
//   avatar/         the avatar in the room: speech in, frames paced and published (or an avatar service)
//   pipelines/      which avatar an identity's pipeline renders (the built-in talking head, the stand-in)
//   conversation/   the AgentSession: listening, turns, instructions, camera, transcripts
//   providers/      speech-to-text, language model and text-to-speech: cloud plugins or offline models
//   reports/        what the job reports to the control plane (minutes the visitor saw, usage,
//                   transcript turns, turn quality), and their delivery
//   agents-adapter/ the one place that reaches past the agents framework's public API (and its patch)
//   logging.ts      the agent's structured log: one logger type, a job's lines carry its session
export {
  type AgentLogLevel,
  type AgentWorker,
  type AgentWorkerOptions,
  JOB_ENTRY,
  startAgentWorker,
} from './worker.ts';
