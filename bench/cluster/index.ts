// bench/cluster: POST /v1/sessions/start through two API processes behind a load balancer,
// under bursts of concurrent starts, on the cluster topology of test/cluster (two LiveKit
// nodes on one Redis, Postgres, the S3 server, two agent workers of 10 slots each). Each
// burst's sessions are ended at once. Needs Postgres, S3 and Redis, which the bootstrap starts:
//   npm run bench -- bench/cluster/index.ts [--concurrent 20] [--bursts 5]
import { parseArgs } from 'node:util';
import { openDatabase } from '../../src/db/index.ts';
import { freeAgentSlots } from '../../src/workers/admission.ts';
import { startCluster } from '../../test/cluster/topology.ts';
import { eventually } from '../../test/support/visitor.ts';
import { benchAccount, report } from '../support/index.ts';

const { values } = parseArgs({
  options: { concurrent: { type: 'string', default: '20' }, bursts: { type: 'string', default: '5' } },
});
const CONCURRENT = Number(values.concurrent);
const dirs: string[] = [];
// One account fills every slot: admission's fair share (slots kept for other accounts) is off.
const cluster = await startCluster(dirs, {
  agentMaxJobs: Math.ceil(CONCURRENT / 2),
  apiEnv: { SESSION_RESERVED_PERCENT: '0' },
});
const database = await openDatabase({ databaseUrl: cluster.databaseUrl });
try {
  console.log(
    `cpus=${navigator.hardwareConcurrency} bun=${Bun.version} api processes=2 workers=2 concurrent=${CONCURRENT} bursts=${values.bursts}`,
  );
  const created = await fetch(`${cluster.apis[0]!.url}/internal/admin/accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${cluster.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'bench@example.com', credits: 10_000_000 }),
  });
  const apiKey = ((await created.json()) as { api_key: string }).api_key;
  // The identity made through the second API process, the sessions through the balancer.
  const identityId = await benchAccount(cluster.apis[1]!.url, apiKey).createIdentity();
  const { post } = benchAccount(cluster.balancer.url, apiKey);

  const latencies: number[] = [];
  let refused = 0;
  for (let burst = 0; burst < Number(values.bursts); burst++) {
    // Every slot free again (the previous burst's jobs gone), as the heartbeats say.
    await eventually(
      async () => (await freeAgentSlots(database.db, 'likeness-agent', 60)).free >= CONCURRENT,
      120_000,
      'free slots',
    );
    await Bun.sleep(3_000);
    const results = await Promise.all(
      Array.from({ length: CONCURRENT }, async () => {
        const t0 = performance.now();
        const answer = await post('/v1/sessions/start', { identity_id: identityId });
        const ms = performance.now() - t0;
        return {
          ms,
          status: answer.status,
          session: answer.status === 200 ? ((await answer.json()) as { room_name: string }) : undefined,
        };
      }),
    );
    for (const result of results) {
      if (result.status === 200) latencies.push(result.ms);
      else refused++;
    }
    await Promise.all(results.filter((r) => r.session).map((r) => post(`/v1/sessions/${r.session!.room_name}/end`)));
  }
  report(`POST /v1/sessions/start, ${CONCURRENT} at once through 2 API processes`, latencies);
  console.log(`refused (503): ${refused} of ${CONCURRENT * Number(values.bursts)}`);
} finally {
  await database.close();
  await cluster.stop();
}
process.exit(0);
