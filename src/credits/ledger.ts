// The one credit balance of an account. Every change is a ledger row with a unique
// (kind, reference), written in the same transaction as a guarded balance update, so a
// retried or concurrent charge is applied once and a balance never goes negative.
import { and, eq, gte, lte, sql } from 'drizzle-orm';
import { accounts } from '../accounts/schema.ts';
import { newId } from '../db/ids.ts';
import type { Database, Queryable } from '../db/index.ts';
import { keysetPage } from '../db/paging.ts';
import { writeEvent } from '../webhooks/index.ts';
import { creditLedger } from './schema.ts';

export type LedgerKind = (typeof creditLedger.$inferInsert)['kind'];

/** The most an account can hold: its balance is a Postgres `integer`. */
export const MAX_BALANCE = 2_147_483_647;

/** A credit that would take the balance past MAX_BALANCE; nothing was recorded. */
export class BalanceLimitExceeded extends Error {
  constructor(readonly accountId: string) {
    super(`The balance cannot exceed ${MAX_BALANCE} credits`);
  }
}

export class InsufficientCredits extends Error {
  constructor(
    readonly accountId: string,
    readonly needed: number,
  ) {
    super(`Insufficient credits: ${needed} needed`);
  }
}

export interface LedgerEntry {
  id: string;
  amount: number;
  kind: LedgerKind;
  reference: string;
  createdAt: Date;
}

export class CreditLedger {
  constructor(private readonly db: Database) {}

  async balance(accountId: string, q: Queryable = this.db): Promise<number | undefined> {
    const [row] = await q.select({ balance: accounts.balance }).from(accounts).where(eq(accounts.id, accountId));
    return row?.balance;
  }

  /** Below this balance a charge sends `credits.low` (0: never). */
  async lowBalanceThreshold(accountId: string): Promise<number> {
    const [row] = await this.db
      .select({ threshold: accounts.lowBalanceThreshold })
      .from(accounts)
      .where(eq(accounts.id, accountId));
    return row?.threshold ?? 0;
  }

  async setLowBalanceThreshold(accountId: string, threshold: number): Promise<number> {
    await this.db.update(accounts).set({ lowBalanceThreshold: threshold }).where(eq(accounts.id, accountId));
    return threshold;
  }

  /** True when the account could pay `amount` now (a hint: `charge` is what decides). */
  async canAfford(accountId: string, amount: number): Promise<boolean> {
    return ((await this.balance(accountId)) ?? 0) >= amount;
  }

  /**
   * Debit `amount` once for (kind, reference). Runs inside the caller's transaction when
   * given one, so the charge commits or rolls back with the work it pays for.
   * Returns false when this reference was already charged; throws InsufficientCredits.
   */
  async charge(
    q: Queryable,
    entry: { accountId: string; amount: number; kind: Exclude<LedgerKind, 'grant'>; reference: string },
  ): Promise<boolean> {
    const run = async (tx: Queryable) => {
      const inserted = await tx
        .insert(creditLedger)
        .values({
          id: newId('led'),
          accountId: entry.accountId,
          amount: -entry.amount,
          kind: entry.kind,
          reference: entry.reference,
        })
        .onConflictDoNothing({ target: [creditLedger.kind, creditLedger.reference] })
        .returning({ id: creditLedger.id });
      if (inserted.length === 0) return false;
      const updated = await tx
        .update(accounts)
        .set({ balance: sql`${accounts.balance} - ${entry.amount}` })
        .where(and(eq(accounts.id, entry.accountId), gte(accounts.balance, entry.amount)))
        .returning({ balance: accounts.balance, threshold: accounts.lowBalanceThreshold });
      if (updated.length === 0) throw new InsufficientCredits(entry.accountId, entry.amount);
      const { balance, threshold } = updated[0]!;
      // Once per crossing: this charge took the balance below the account's threshold. Holds do
      // not count (their release gives them back); the minute charged with the release does.
      if (entry.kind !== 'session_hold' && balance < threshold && balance + entry.amount >= threshold) {
        await writeEvent(tx, entry.accountId, 'credits.low', {
          balance,
          threshold,
          charged: entry.amount,
          kind: entry.kind,
          reference: entry.reference,
        });
      }
      return true;
    };
    // Inside a caller's transaction this is a savepoint: a refused charge rolls back only itself.
    return (q as Database).transaction(run);
  }

  /**
   * Add `amount` once for (kind, reference), in the caller's transaction. Returns false when
   * this reference was already credited; throws BalanceLimitExceeded (the caller's transaction
   * rolls the ledger row back).
   */
  async credit(
    q: Queryable,
    entry: {
      accountId: string;
      amount: number;
      kind: Extract<LedgerKind, 'grant' | 'session_release' | 'adjustment'>;
      reference: string;
    },
  ): Promise<boolean> {
    // The ledger's amount is an `integer` too.
    if (entry.amount > MAX_BALANCE) throw new BalanceLimitExceeded(entry.accountId);
    const inserted = await q
      .insert(creditLedger)
      .values({ id: newId('led'), ...entry })
      .onConflictDoNothing({ target: [creditLedger.kind, creditLedger.reference] })
      .returning({ id: creditLedger.id });
    if (inserted.length === 0) return false;
    // Guarded like a charge: past the column's range Postgres would fail the statement (a 500).
    const updated = await q
      .update(accounts)
      .set({ balance: sql`${accounts.balance} + ${entry.amount}` })
      .where(and(eq(accounts.id, entry.accountId), lte(accounts.balance, MAX_BALANCE - entry.amount)))
      .returning({ balance: accounts.balance });
    if (updated.length === 0 && (await this.balance(entry.accountId, q)) !== undefined)
      throw new BalanceLimitExceeded(entry.accountId);
    return true;
  }

  /** Add credits. Idempotent per reference when one is given. */
  async grant(accountId: string, amount: number, reference: string = newId('led')): Promise<number> {
    if (!Number.isInteger(amount) || amount <= 0) throw new Error('A grant must be a positive integer');
    return this.db.transaction(async (tx) => {
      await this.credit(tx, { accountId, amount, kind: 'grant', reference });
      return (await this.balance(accountId, tx)) ?? 0;
    });
  }

  /** The newest `limit` entries of the ledger (GET /v1/credits pages through it all). */
  async entries(accountId: string, limit = 100): Promise<LedgerEntry[]> {
    const { rows } = (await keysetPage(this.db, creditLedger, {
      scope: eq(creditLedger.accountId, accountId),
      limit,
    }))!;
    return rows.map(({ id, amount, kind, reference, createdAt }) => ({ id, amount, kind, reference, createdAt }));
  }
}
