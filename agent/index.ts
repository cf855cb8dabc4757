// The LiveKit Agents side of Likeness: a worker registered for explicit dispatch under
// AGENT_NAME, whose jobs (agent/job.ts, one process each) render the avatar into the
// session's room and report streaming minutes to the control plane.
export const AGENT_NAME = 'likeness-agent';

export { JOB_ENTRY, startAgentWorker, type AgentLogLevel, type AgentWorker, type AgentWorkerOptions } from './worker.ts';
export { jobMetadataSchema, parseJobMetadata, type JobIdentity, type JobMetadata } from './metadata.ts';
