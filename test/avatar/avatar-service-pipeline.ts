// The agent side of the test-only pipelines `test-avatar-service` (and its broken twin), loaded by each job process
// through AGENT_PIPELINE_MODULES: it asks the fake avatar service (avatar-service.ts, at
// TEST_AVATAR_SERVICE_URL) to join the session, as a real third-party integration calls its
// provider's API.
import type { AvatarServicePipeline } from '../../agent/pipelines/index.ts';

export const TEST_AVATAR_SERVICE_PIPELINE = 'test-avatar-service';
/** A pipeline whose service is down: every start fails. */
export const TEST_AVATAR_SERVICE_DOWN_PIPELINE = 'test-avatar-service-down';

const pipeline: AvatarServicePipeline = {
  kind: 'service',
  id: TEST_AVATAR_SERVICE_PIPELINE,
  async start(request) {
    const base = process.env.TEST_AVATAR_SERVICE_URL;
    if (!base) throw new Error('TEST_AVATAR_SERVICE_URL is not set');
    const response = await fetch(`${base}/sessions`, { method: 'POST', body: JSON.stringify(request), headers: { 'content-type': 'application/json' } });
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
  id: TEST_AVATAR_SERVICE_DOWN_PIPELINE,
  start: () => Promise.reject(new Error('the avatar service is down')),
};

export default [pipeline, down];
