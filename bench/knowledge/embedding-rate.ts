// What a document's passages cost after it is read: the offline model's time a passage (the
// processing budget, KNOWLEDGE_PROCESSING_SECONDS, must hold the 1,000-passage bound at this rate)
// and how long storing them holds PGlite's thread (the API's own: issue 41's "/healthz under
// 1 s" while a large document is stored). The passages are cut from bench/knowledge/documents.
//
//   npm run bench -- bench/knowledge/embedding-rate.ts [--passages 64]
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { accounts } from '../../src/accounts/schema.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/index.ts';
import { chunkText } from '../../src/knowledge/chunking.ts';
import { htmlText } from '../../src/knowledge/html-text.ts';
import { markdownText } from '../../src/knowledge/markdown-text.ts';
import { OfflineEmbedder } from '../../src/knowledge/offline-embedder.ts';
import { documents } from '../../src/knowledge/schema.ts';
import { insertChunks, searchCapabilities } from '../../src/knowledge/store.ts';

const wanted = Number(process.argv[process.argv.indexOf('--passages') + 1]) || 64;
const folder = new URL('./documents/', import.meta.url).pathname;
const texts = await Promise.all(
  (await readdir(folder)).map(async (name) => {
    const raw = await readFile(join(folder, name), 'utf8');
    return name.endsWith('.html') ? htmlText(raw) : name.endsWith('.md') ? markdownText(raw) : raw;
  }),
);
const pool = texts.flatMap(chunkText);
const passages = Array.from({ length: wanted }, (_, i) => pool[i % pool.length]!);
const meanChars = passages.reduce((sum, p) => sum + p.length, 0) / passages.length;

const embedder = new OfflineEmbedder(loadConfig().knowledge.modelsDir);
await embedder.embedPassages(passages.slice(0, 8)); // the thread loads the model first
let started = performance.now();
const vectors = await embedder.embedPassages(passages);
const perPassage = (performance.now() - started) / passages.length;
await embedder.close();
console.log(
  `offline embedding: ${perPassage.toFixed(0)} ms a passage (${passages.length}, mean ${meanChars.toFixed(0)} characters)`,
);
console.log(`  the 1,000-passage bound: ~${perPassage.toFixed(0)} s`);

// Storing: 1,000 passages into a fresh PGlite, the longest the event loop went without a turn.
const database = await openDatabase({}); // PGlite in memory
const db = database.db;
const { path } = await searchCapabilities(db);
const accountId = 'acc_bench';
await db.insert(accounts).values({ id: accountId, email: 'bench@example.com' });
let longest = 0;
let last = performance.now();
const ticker = setInterval(() => {
  const now = performance.now();
  longest = Math.max(longest, now - last);
  last = now;
}, 5);
for (let round = 0; round < 3; round++) {
  const id = `doc_bench${round}`;
  await db
    .insert(documents)
    .values({ id, accountId, name: id, contentType: 'text/plain', bytes: 1, status: 'processing' });
  const chunks = Array.from({ length: 1000 }, (_, i) => ({
    text: passages[i % passages.length]!,
    embedding: vectors[i % vectors.length]!,
  }));
  longest = 0;
  last = performance.now();
  started = performance.now();
  await insertChunks(db, path, { id, accountId }, chunks);
  console.log(
    `storing 1,000 passages (${path}, ${round * 1000} before): ${(performance.now() - started).toFixed(0)} ms, the loop held at most ${longest.toFixed(0)} ms`,
  );
}
clearInterval(ticker);
await database.close();
