// /v1/credits (the balance and its ledger, paged) and /v1/usage (docs/api.md#credits-read,
// #usage), for API keys and, as twins, the console.
import { and, desc, eq, lt, or } from 'drizzle-orm';
import { authenticatedRoutes, PUBLIC_API, type Audience } from '../auth/index.ts';
import type { Database } from '../db/index.ts';
import { ErrorResponse, invalid, ValidationErrorResponse } from '../http/errors.ts';
import { CreditsQuery, CreditsResponse, UsageQuery, UsageResponse } from './contract.ts';
import type { CreditLedger } from './index.ts';
import { creditLedger } from './schema.ts';
import { accountUsage, usageRange } from './usage.ts';

export function creditRoutes({ db, ledger }: { db: Database; ledger: CreditLedger }, audience: Audience = PUBLIC_API) {
  return authenticatedRoutes(db, audience, '', 'Credits')
    .get(
      '/credits',
      async ({ caller, query }) => {
        const limit = query.limit ?? 100;
        const conditions = [eq(creditLedger.accountId, caller.accountId)];
        if (query.after) {
          const [cursor] = await db.select().from(creditLedger).where(and(eq(creditLedger.id, query.after), eq(creditLedger.accountId, caller.accountId)));
          if (!cursor) throw invalid(['query', 'after'], 'after must be the entry_id of an entry in the ledger', 'unknown_cursor');
          conditions.push(or(lt(creditLedger.createdAt, cursor.createdAt), and(eq(creditLedger.createdAt, cursor.createdAt), lt(creditLedger.id, cursor.id)))!);
        }
        // One more than the page: whether another follows.
        const rows = await db
          .select()
          .from(creditLedger)
          .where(and(...conditions))
          .orderBy(desc(creditLedger.createdAt), desc(creditLedger.id))
          .limit(limit + 1);
        return {
          balance: (await ledger.balance(caller.accountId)) ?? 0,
          entries: rows.slice(0, limit).map((entry) => ({
            entry_id: entry.id,
            kind: entry.kind,
            amount: entry.amount,
            reference: entry.reference,
            created_at: entry.createdAt.toISOString(),
          })),
          has_more: rows.length > limit,
        };
      },
      {
        query: CreditsQuery,
        response: { 200: CreditsResponse, 401: ErrorResponse, 422: ValidationErrorResponse },
        detail: { operationId: 'getCredits', summary: "The caller's balance and its ledger, newest first, paged" },
      },
    )
    .get('/usage', async ({ caller, query }) => accountUsage(db, caller.accountId, usageRange(query)), {
      query: UsageQuery,
      response: { 200: UsageResponse, 401: ErrorResponse, 422: ValidationErrorResponse },
      detail: { operationId: 'getUsage', summary: 'Sessions, avatar minutes, identities and credits per day or hour over a range' },
    });
}
