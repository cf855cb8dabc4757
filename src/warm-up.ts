// Warm before ready (docs/api.md#health): what a first request would otherwise pay is paid at
// start, before /readyz says ready. Each pipeline warms itself (the built-in one trains three
// times on a sample photo without storing it: the face detector's models, the decoders and the
// training code; the first identity create took 1.3 s against 0.25 s for the next), and the
// console's pages and the embed's scripts are bundled (a second each, for livekit-client).
import { sql } from 'drizzle-orm';
import { warmFrontEnd } from './console/front-end.ts';
import type { Database } from './db/index.ts';
import { warmEmbed } from './embed/pages.ts';
import type { PipelineRegistry } from './pipelines/registry.ts';

/** The tables a first create or session start reads: the database plans and caches them now. */
const TABLES = ['accounts', 'api_keys', 'identities', 'credit_ledger', 'sessions', 'agent_workers'];

export async function warmUp({ pipelines, db }: { pipelines: PipelineRegistry; db: Database }): Promise<void> {
  // One after the other: at start the machine is busy enough.
  for (const pipeline of pipelines.list()) await pipeline.warm?.();
  for (const table of TABLES) await db.execute(sql.raw(`select * from ${table} limit 0`));
  await warmFrontEnd();
  await warmEmbed();
}
