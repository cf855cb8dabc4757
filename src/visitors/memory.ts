// What is remembered of a visitor (docs/api.md#visitors), on the control plane's side: the facts a
// session starts with (its scope's), the job's report stored once the session ended, PATCH's
// replacement, and the sweep that forgets visitors not seen for VISITOR_MEMORY_DAYS. Facts keep
// when and in which session they were learned; a fact written again keeps its first learning.
import { and, eq, isNotNull, lt } from 'drizzle-orm';
import {
  type DispatchMemory,
  MEMORY_MAX_FACTS,
  type MemoryReport,
  type MemoryScope,
  normalizedFact,
} from '../contract/index.ts';
import type { Database, Queryable } from '../db/index.ts';
import { deleteOwnedRow, isOwned, ownedRow } from '../db/owned.ts';
import { sessions } from '../sessions/schema.ts';
import { writeEvent } from '../webhooks/index.ts';
import { type StoredFact, visitors } from './schema.ts';

type SessionRow = typeof sessions.$inferSelect;

/** Which facts a session reads and writes: its identity's, or the account's shared ones (null). */
export function scopeIdentityOf(scope: MemoryScope, identityId: string | null): string | null {
  // A session without an identity has none to scope by: it uses the account's memory.
  return scope === 'identity' ? identityId : null;
}

const sameText = (a: string, b: string) => normalizedFact(a).toLowerCase() === normalizedFact(b).toLowerCase();

/** The facts of one scope, oldest first. */
export function factsIn(facts: readonly StoredFact[], identityId: string | null): StoredFact[] {
  return facts.filter((fact) => fact.identity_id === identityId);
}

/**
 * `facts` with one scope's replaced by `texts` (in their order, each once, the last
 * MEMORY_MAX_FACTS): a text already remembered there keeps its learning; a new one is learned
 * now, in `sessionId` (null: PATCH).
 */
export function replacedFacts(
  facts: readonly StoredFact[],
  identityId: string | null,
  texts: readonly string[],
  sessionId: string | null,
  now: Date,
): StoredFact[] {
  const before = factsIn(facts, identityId);
  const written: StoredFact[] = [];
  for (const raw of texts) {
    const text = normalizedFact(raw);
    if (!text || written.some((fact) => sameText(fact.text, text))) continue;
    const known = before.find((fact) => sameText(fact.text, text));
    written.push(known ?? { text, identity_id: identityId, learned_at: now.toISOString(), session_id: sessionId });
  }
  return [...facts.filter((fact) => fact.identity_id !== identityId), ...written.slice(-MEMORY_MAX_FACTS)];
}

/** The visitor's row, if the account has them. */
/** What a session starting now with this visitor is told, oldest first. */
export async function rememberedFacts(
  q: Queryable,
  accountId: string,
  visitorId: string,
  identityId: string | null,
): Promise<string[]> {
  const row = await ownedRow(q, visitors, accountId, visitorId);
  return row ? factsIn(row.facts, identityId).map((fact) => fact.text) : [];
}

/** A session's dispatched memory: what is remembered in its scope; null without a visitor or with memory off. */
export async function sessionMemory(
  q: Queryable,
  session: Pick<SessionRow, 'accountId' | 'visitorId' | 'memoryScope' | 'identityId'>,
): Promise<DispatchMemory | null> {
  if (!session.visitorId || !session.memoryScope) return null;
  const identityId = scopeIdentityOf(session.memoryScope, session.identityId);
  return { facts: await rememberedFacts(q, session.accountId, session.visitorId, identityId) };
}

/** In the start's transaction: the visitor exists from their first session on, and was seen now. */
export async function visitorStarted(q: Queryable, accountId: string, visitorId: string, now = new Date()) {
  await q
    .insert(visitors)
    .values({ id: visitorId, accountId, lastSessionAt: now })
    .onConflictDoUpdate({ target: [visitors.accountId, visitors.id], set: { lastSessionAt: now } });
}

/**
 * Stores the job's facts for the session's visitor and scope. Nothing when the session had no
 * memory, the visitor was forgotten meanwhile (DELETE unlinks their sessions), or the job could
 * not write them (what was remembered stays). A redelivered report changes nothing.
 */
export async function recordMemory(db: Database, session: SessionRow, report: MemoryReport): Promise<void> {
  if (!session.visitorId || !session.memoryScope || report.facts === null) return;
  const identityId = scopeIdentityOf(session.memoryScope, session.identityId);
  const visitorId = session.visitorId;
  await db.transaction(async (tx) => {
    const [row] = await tx
      .select()
      .from(visitors)
      .where(isOwned(visitors, session.accountId, visitorId))
      .for('update');
    if (!row) return;
    const now = new Date();
    const facts = replacedFacts(row.facts, identityId, report.facts!, session.id, now);
    const texts = (list: readonly StoredFact[]) => factsIn(list, identityId).map((fact) => fact.text);
    // A report that changes nothing (a redelivery, a conversation that taught nothing) is not news.
    if (JSON.stringify(texts(facts)) === JSON.stringify(texts(row.facts))) return;
    await tx
      .update(visitors)
      .set({ facts, updatedAt: now })
      .where(isOwned(visitors, session.accountId, visitorId));
    await writeEvent(tx, session.accountId, 'visitor.memory_updated', {
      visitor_id: visitorId,
      session_id: session.id,
      identity_id: identityId,
      facts: texts(facts),
    });
  });
}

/** Forgets visitors whose last session began more than `days` ago (0: never); their ids. */
export async function forgetStaleVisitors(db: Database, days: number, now = new Date()): Promise<string[]> {
  if (days <= 0) return [];
  const cutoff = new Date(now.getTime() - days * 86_400_000);
  const stale = await db
    .select({ id: visitors.id, accountId: visitors.accountId })
    .from(visitors)
    .where(and(isNotNull(visitors.lastSessionAt), lt(visitors.lastSessionAt, cutoff)));
  for (const { id, accountId } of stale) await forgetVisitor(db, accountId, id);
  return stale.map(({ id }) => id);
}

/**
 * Forgets a visitor entirely: their facts, and the link from their sessions (which keep their
 * transcripts, as any session does). True when there was one.
 */
export async function forgetVisitor(db: Database, accountId: string, visitorId: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const gone = await deleteOwnedRow(tx, visitors, accountId, visitorId);
    await tx
      .update(sessions)
      .set({ visitorId: null, memoryScope: null })
      .where(and(eq(sessions.accountId, accountId), eq(sessions.visitorId, visitorId)));
    return gone;
  });
}
