// Retrieval latency with 10,000 passages in one account (issue 33 point 3; target p50 ≤ 30 ms),
// on PGlite (pgvector: the database ranks, by a full scan of the searched documents' rows or by
// the HNSW index) and on Postgres without pgvector (exact: this process ranks, from memory once
// loaded). Each figure is search() as a turn's retrieval runs it, minus the HTTP: "search" with
// the question's vector given, "turn" with the question embedded by the offline e5 model first.
//
//   npm run bench -- bench/knowledge/latency.ts [chunks=10000]
// (the bench mode of the bootstrap starts a throwaway Postgres: TEST_DATABASE_URL)
import os from 'node:os';
import { SQL } from 'bun';
import { accounts } from '../../src/accounts/schema.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/index.ts';
import {
  EMBEDDING_DIMENSIONS,
  type Embedder,
  OFFLINE_EMBEDDING_MODEL,
  OfflineEmbedder,
  search,
  searchCapabilities,
} from '../../src/knowledge/index.ts';
import { documents } from '../../src/knowledge/schema.ts';
import { insertChunks, pgvectorSearch } from '../../src/knowledge/store.ts';
import { configureLogging } from '../../src/logging/index.ts';
import { report } from '../support/index.ts';

const CHUNKS = Number(process.argv[2] ?? 10_000);
const DOCUMENTS = 20;
const TOPICS = 300;
const QUERIES = 200;
const WARM_UP = 20;
const QUESTIONS = [
  'When does the clinic open on Saturdays?',
  '¿Cuánto cuesta el envío a Canadá?',
  'How long is the warranty on laptops?',
  'Where can I park my car?',
];

/** Deterministic pseudo-random numbers (the figures are comparable run to run). */
let seed = 42;
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31 - 0.5;
};
const unit = (v: Float32Array) => {
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
};
/** Clustered vectors, as real passages' are (topics), not uniform noise. */
const centres = Array.from({ length: TOPICS }, () => unit(Float32Array.from({ length: EMBEDDING_DIMENSIONS }, random)));
const near = (centre: Float32Array, spread: number) => unit(centre.map((x) => x + random() * spread));

/** The question's vector given, as if embedded: the search alone is measured. */
function givenVectors(): Embedder {
  let next = 0;
  return {
    model: OFFLINE_EMBEDDING_MODEL,
    dimensions: EMBEDDING_DIMENSIONS,
    embedQuery: async () => near(centres[next++ % TOPICS]!, 0.08),
    embedPassages: async () => [],
    close: async () => {},
  };
}

async function timed(runs: number, once: (i: number) => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < WARM_UP; i++) await once(i);
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await once(i);
    samples.push(performance.now() - started);
  }
  return samples;
}

async function benchEngine(label: string, options: { databaseUrl?: string }, offline: OfflineEmbedder) {
  const handle = await openDatabase(options.databaseUrl ? options : { pgliteDir: 'memory://' });
  const { db } = handle;
  const { path } = await searchCapabilities(db);
  const accountId = `acc_bench${label}`;
  await db.insert(accounts).values({ id: accountId, email: `${label}@bench.example` });
  const filler = 'A passage of the bench corpus about opening hours, prices, returns and parking. '.repeat(8);
  const documentIds: string[] = [];
  const loadStarted = performance.now();
  for (let d = 0; d < DOCUMENTS; d++) {
    const id = `doc_bench${label}${d}`;
    documentIds.push(id);
    const count = Math.floor(CHUNKS / DOCUMENTS);
    await db.insert(documents).values({
      id,
      accountId,
      name: `Bench ${d}`,
      contentType: 'text/plain',
      bytes: count * filler.length,
      status: 'ready',
      chunkCount: count,
      embeddingModel: OFFLINE_EMBEDDING_MODEL,
    });
    const chunks = Array.from({ length: count }, (_, i) => ({
      text: `${i}: ${filler}`,
      embedding: near(centres[(d * count + i) % TOPICS]!, 0.15),
    }));
    await insertChunks(db, path, { id, accountId }, chunks);
  }
  console.log(
    `${label}: ${CHUNKS} passages in ${DOCUMENTS} documents loaded in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s (path ${path})`,
  );
  const request = (query: string) => ({ accountId, documentIds, query });
  const given = givenVectors();
  report(`${label} ${path}: search`, await timed(QUERIES, () => search({ db, embedder: given }, request('q'))));
  if (path === 'pgvector') {
    const vector = () => near(centres[Math.floor((random() + 0.5) * TOPICS)]!, 0.08);
    report(
      `${label} pgvector, full scan`,
      await timed(QUERIES, () => pgvectorSearch(db, accountId, documentIds, 0, vector(), 3)),
    );
    report(
      `${label} pgvector, HNSW index`,
      await timed(QUERIES, () => pgvectorSearch(db, accountId, documentIds, Infinity, vector(), 3)),
    );
  }
  report(
    `${label} ${path}: turn (e5 question + search)`,
    await timed(QUERIES, (i) => search({ db, embedder: offline }, request(`${QUESTIONS[i % QUESTIONS.length]} ${i}`))),
  );
  await handle.close();
}

const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn' });
configureLogging(config.log);
const offline = new OfflineEmbedder(config.knowledge.modelsDir);
console.log(
  `retrieval latency, ${new Date().toISOString().slice(0, 10)}, ${os.cpus()[0]?.model} × ${os.cpus().length}, load ${os.loadavg()[0]!.toFixed(1)}`,
);
await benchEngine('pglite', {}, offline);
const adminUrl = process.env.TEST_DATABASE_URL;
if (adminUrl) {
  const name = `likeness_bench_${crypto.randomUUID().replaceAll('-', '')}`;
  const admin = new SQL(adminUrl);
  await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.close();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  await benchEngine('postgres', { databaseUrl: url.toString() }, offline);
} else {
  console.log('postgres: skipped (no TEST_DATABASE_URL: run it with `npm run bench`)');
}
await offline.close();
