// The LiveKit Agents worker (voice agent and avatar renderer) lands here with the
// sessions and agent issues; the control plane in src/ runs without it today.
export const AGENT_NAME = 'likeness-agent';
