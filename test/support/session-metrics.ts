// A session's `metrics` as GET /v1/sessions/{id} answers them (docs/api.md#session-metrics),
// read until a condition holds: the job reports each turn as it ends, a moment after it is heard.
import type { SessionMetrics } from '../../src/sessions/quality.ts';
import type { TestAccount } from './service.ts';
import { eventually } from './visitor.ts';

export type SessionMetricsBody = SessionMetrics;

export function sessionMetricsOnce(
  account: TestAccount,
  sessionId: string,
  ready: (metrics: SessionMetricsBody) => boolean,
  timeoutMs = 10_000,
): Promise<SessionMetricsBody> {
  return eventually(
    async () => {
      const { metrics } = (await (await account.call('GET', `/v1/sessions/${sessionId}`)).json()) as {
        metrics: SessionMetricsBody;
      };
      return ready(metrics) ? metrics : undefined;
    },
    timeoutMs,
    'the turns in the session metrics',
  );
}
