// Knowledge (docs/api.md#documents): /v1/documents for API keys and, as twins, the console;
// and the internal route a session's job retrieves each turn's passages from.
// STUB: being built.
import { Elysia } from 'elysia';
import type { Audience } from '../auth/index.ts';
import type { KnowledgeSettings } from '../config.ts';
import type { Database } from '../db/index.ts';

export interface KnowledgeDeps {
  db: Database;
  settings: KnowledgeSettings;
}

export function documentRoutes<const Prefix extends string>(_deps: KnowledgeDeps, _audience: Audience<Prefix>) {
  return new Elysia();
}

/** POST /internal/sessions/{id}/knowledge, behind the job door (src/sessions/job-reports.ts). */
export function knowledgeRoutes(_deps: KnowledgeDeps) {
  return new Elysia();
}
