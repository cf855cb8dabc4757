// The agent's half of the example pipeline `example-avatar-service`, loaded by each job
// process through AGENT_PIPELINE_MODULES: it asks the avatar service (service.ts, at
// AVATAR_SERVICE_URL) to join the session, as a third-party integration calls its provider's
// API. Its twin `example-avatar-service-down` always fails, to show (and test) the fallback
// to the built-in stand-in.
import type { AvatarServicePipeline } from '../../agent/pipelines/index.ts';

export const AVATAR_SERVICE_PIPELINE = 'example-avatar-service';
/** A pipeline whose service is down: every start fails. */
export const AVATAR_SERVICE_DOWN_PIPELINE = 'example-avatar-service-down';

const pipeline: AvatarServicePipeline = {
  kind: 'service',
  id: AVATAR_SERVICE_PIPELINE,
  async start(request) {
    const base = process.env.AVATAR_SERVICE_URL;
    if (!base) throw new Error('AVATAR_SERVICE_URL is not set');
    const response = await fetch(`${base}/sessions`, {
      method: 'POST',
      body: JSON.stringify(request),
      headers: { 'content-type': 'application/json' },
    });
    if (!response.ok) throw new Error(`the avatar service answered ${response.status}`);
    const { session_id } = (await response.json()) as { session_id: string };
    return {
      async close() {
        await fetch(`${base}/sessions/${session_id}`, { method: 'DELETE' });
      },
    };
  },
};

const down: AvatarServicePipeline = {
  kind: 'service',
  id: AVATAR_SERVICE_DOWN_PIPELINE,
  start: () => Promise.reject(new Error('the avatar service is down')),
};

export default [pipeline, down];
