// /v1/credits (the balance and its ledger, paged) and /v1/usage (docs/api.md#credits-read,
// #usage), for API keys and, as twins, the console.

import { eq } from 'drizzle-orm';
import { type Audience, authenticatedRoutes } from '../auth/index.ts';
import type { Database } from '../db/index.ts';
import { errorResponses } from '../http/errors.ts';
import { listPage } from '../http/paging.ts';
import {
  CreditSettingsRequest,
  CreditSettingsResponse,
  CreditsQuery,
  CreditsResponse,
  UsageQuery,
  UsageResponse,
} from './contract.ts';
import type { CreditLedger } from './ledger.ts';
import { creditLedger } from './schema.ts';
import { accountUsage, usageRange } from './usage.ts';

export { BalanceLimitExceeded, CreditLedger, InsufficientCredits, type LedgerKind, MAX_BALANCE } from './ledger.ts';
export { emptyUsage } from './usage.ts';

export function creditRoutes<const Prefix extends string>(
  { db, ledger }: { db: Database; ledger: CreditLedger },
  audience: Audience<Prefix>,
) {
  return authenticatedRoutes(db, audience, '', 'Credits')
    .get(
      '/credits',
      async ({ caller, query, set }) => {
        const page = await listPage(
          db,
          creditLedger,
          {
            scope: eq(creditLedger.accountId, caller.accountId),
            limit: query.limit ?? 100,
            after: query.after,
            unknownAfter: 'after must be the entry_id of an entry in the ledger',
          },
          { set, path: `${audience.prefix}/credits` },
        );
        return {
          balance: (await ledger.balance(caller.accountId)) ?? 0,
          entries: page.rows.map((entry) => ({
            entry_id: entry.id,
            kind: entry.kind,
            amount: entry.amount,
            reference: entry.reference,
            created_at: entry.createdAt.toISOString(),
          })),
          has_more: page.hasMore,
          low_balance_threshold: await ledger.lowBalanceThreshold(caller.accountId),
        };
      },
      {
        query: CreditsQuery,
        response: { 200: CreditsResponse, ...errorResponses(401, 422) },
        detail: { operationId: 'getCredits', summary: "The caller's balance and its ledger, newest first, paged" },
      },
    )
    .patch(
      '/credits',
      async ({ caller, body }) => ({
        balance: (await ledger.balance(caller.accountId)) ?? 0,
        low_balance_threshold: await ledger.setLowBalanceThreshold(caller.accountId, body.low_balance_threshold),
      }),
      {
        body: CreditSettingsRequest,
        parse: 'json',
        response: { 200: CreditSettingsResponse, ...errorResponses(401, 422) },
        detail: {
          operationId: 'updateCreditSettings',
          summary: 'Set the balance below which the `credits.low` webhook event is sent',
        },
      },
    )
    .get('/usage', async ({ caller, query }) => accountUsage(db, caller.accountId, usageRange(query)), {
      query: UsageQuery,
      response: { 200: UsageResponse, ...errorResponses(401, 422) },
      detail: {
        operationId: 'getUsage',
        summary: 'Sessions, avatar minutes, identities and credits per day or hour over a range',
      },
    });
}
