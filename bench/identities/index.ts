// bench/identities: p50/p95 of create (1920×1280 JPEG + 30 s WAV), GET one, and list with
// 10,000 identities, against an in-process service over real HTTP.
// Run: bun bench/identities/index.ts [--creates 30] [--reads 500] [--identities 10000]
// Uses PGlite unless DATABASE_URL is set.
import { parseArgs } from 'node:util';
import { newId } from '../../src/db/ids.ts';
import { identities } from '../../src/identities/schema.ts';
import { portraitJpeg, wav } from '../../test/fixtures/index.ts';
import { report as reportMs, startBenchService } from '../support/index.ts';

const { values } = parseArgs({
  options: {
    creates: { type: 'string', default: '30' },
    reads: { type: 'string', default: '500' },
    identities: { type: 'string', default: '10000' },
  },
});

const report = (label: string, samples: number[]) => reportMs(label, samples, { width: 38 });
async function timed(fn: () => Promise<Response>): Promise<number> {
  const start = performance.now();
  const response = await fn();
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`unexpected ${response.status}`);
  return performance.now() - start;
}

const bench = await startBenchService();
const { service } = bench;
try {
  const engine = service.services.database.engine;
  console.log(`engine=${engine} cpus=${navigator.hardwareConcurrency} bun=${Bun.version}`);
  const account = await service.services.operations.createAccount({ email: 'bench@example.com', credits: 10_000_000 });
  const headers = { authorization: `Bearer ${account.api_key}` };
  const jpeg = await portraitJpeg({ width: 1920, height: 1280 });
  const voice = wav({ seconds: 30 });
  const createForm = () => {
    const form = new FormData();
    form.append('name', 'Bench');
    form.append('prompt', 'You are a benchmark.');
    form.append('image', new File([jpeg as Uint8Array<ArrayBuffer>], 'p.jpg'));
    form.append('audio', new File([voice as Uint8Array<ArrayBuffer>], 'v.wav'));
    return form;
  };

  const creates: number[] = [];
  let lastId = '';
  for (let i = 0; i < Number(values.creates) + 2; i++) {
    const start = performance.now();
    const response = await fetch(`${service.url}/v1/identities`, { method: 'POST', headers, body: createForm() });
    const body = (await response.json()) as { identity_id: string };
    if (response.status !== 200) throw new Error(`create answered ${response.status}`);
    if (i >= 2) creates.push(performance.now() - start); // two warm-up calls
    lastId = body.identity_id;
  }
  report('create (1920×1280 JPEG + 30 s WAV)', creates);

  const reads: number[] = [];
  for (let i = 0; i < Number(values.reads); i++)
    reads.push(await timed(() => fetch(`${service.url}/v1/identities/${lastId}`, { headers })));
  report('GET /v1/identities/{id}', reads);

  // Seed rows directly: 10,000 creates through the API would measure create again, slowly.
  const [template] = await service.services.database.db.select().from(identities).limit(1);
  const total = Number(values.identities);
  for (let done = creates.length + 2; done < total; ) {
    const batch = Math.min(1000, total - done);
    const now = Date.now();
    await service.services.database.db.insert(identities).values(
      Array.from({ length: batch }, (_, i) => ({
        ...template!,
        id: newId('idn'),
        name: `Seeded ${done + i}`,
        createdAt: new Date(now - (done + i) * 1000),
        updatedAt: new Date(now),
      })),
    );
    done += batch;
  }
  const lists: number[] = [];
  for (let i = 0; i < 20; i++) lists.push(await timed(() => fetch(`${service.url}/v1/identities`, { headers })));
  report(`GET /v1/identities (all ${total})`, lists);
  const pages: number[] = [];
  for (let i = 0; i < 200; i++)
    pages.push(await timed(() => fetch(`${service.url}/v1/identities?limit=100`, { headers })));
  report(`GET /v1/identities?limit=100 (of ${total})`, pages);
  const rss = process.memoryUsage().rss / 1024 / 1024;
  console.log(`rss=${rss.toFixed(0)} MiB`);
} finally {
  await bench.stop();
}
