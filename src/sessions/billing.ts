// Per-minute billing of avatar sessions (docs/api.md#credits), and of their recording at its
// own price (CREDITS_PER_RECORDED_MINUTE, a `recorded_minute` entry beside each minute's). A start sets one minute's
// credits aside (so 50 concurrent starts on a balance for 5 start 5); the first charged
// minute or the session's end gives the hold back. Each minute is charged once, keyed by
// (session, minute index), so a retried or duplicated report never charges twice. A test
// account's minutes are counted and recorded at a price of nothing (docs/api.md#test-mode).
import { and, eq, sql } from 'drizzle-orm';
import { isTestAccount, liveAccountIdOf } from '../accounts/index.ts';
import { CreditLedger, InsufficientCredits } from '../credits/index.ts';
import { creditLedger } from '../credits/schema.ts';
import type { Database, Queryable } from '../db/index.ts';
import { creditsCharged } from '../metrics/index.ts';
import { sessions } from './schema.ts';

/** `ended`: the session ended before the charge got its row lock (the report raced the ending). */
export type MinuteResult = 'charged' | 'already_charged' | 'insufficient' | 'ended';

export class SessionBilling {
  private readonly ledger: CreditLedger;
  constructor(
    private readonly db: Database,
    readonly perMinute: number,
    readonly perRecordedMinute = 0,
  ) {
    this.ledger = new CreditLedger(db);
  }

  /** What a live account pays for one minute of a session: its avatar, and its recording if recorded. */
  minutePrice(record: boolean): number {
    return this.perMinute + (record ? this.perRecordedMinute : 0);
  }

  /**
   * Whether the account could pay a hold now (an early check; `hold` decides). A test account
   * holds nothing, but starts an avatar only while its live account could pay a live one's
   * (docs/decisions.md#embed-and-test-mode).
   */
  async canHold(accountId: string, record = false): Promise<boolean> {
    const price = this.minutePrice(record);
    return price === 0 || (await this.ledger.canAfford(liveAccountIdOf(accountId), price));
  }

  /** A minute's price for this account: nothing for a test account. */
  priceFor(accountId: string): number {
    return isTestAccount(accountId) ? 0 : this.perMinute;
  }

  /** Set aside one minute (with its recording's) for a new avatar session, in the caller's transaction. Throws InsufficientCredits. */
  async hold(q: Queryable, accountId: string, sessionId: string, record = false): Promise<number> {
    const amount = this.minutePrice(record);
    if (isTestAccount(accountId) || amount === 0) return 0;
    await this.ledger.charge(q, { accountId, amount, kind: 'session_hold', reference: `session:${sessionId}:hold` });
    return amount;
  }

  /** Give a session's hold back (once; later calls do nothing). */
  async release(q: Queryable, session: { id: string; accountId: string; heldCredits: number }): Promise<void> {
    if (session.heldCredits === 0) return;
    await this.ledger.credit(q, {
      accountId: session.accountId,
      amount: session.heldCredits,
      kind: 'session_release',
      reference: `session:${session.id}:hold`,
    });
  }

  /** Charge minute `index` of a running session; the first charge also releases the hold. */
  async chargeMinute(sessionId: string, index: number): Promise<MinuteResult> {
    try {
      const result = await this.db.transaction(async (tx): Promise<MinuteResult | 'charged_nothing'> => {
        const [session] = await tx.select().from(sessions).where(eq(sessions.id, sessionId)).for('update');
        if (!session) throw new Error(`no session ${sessionId}`);
        // Checked again under the lock: the caller read the status before, and an ending since
        // then must not be followed by a charge.
        if (session.status === 'ended') return 'ended';
        await this.release(tx, session);
        if (this.perMinute === 0) return 'charged';
        const price = this.priceFor(session.accountId);
        const charged = await this.ledger.charge(tx, {
          accountId: session.accountId,
          amount: price,
          kind: 'session_minute',
          reference: minuteReference(sessionId, index),
        });
        if (!charged) return 'already_charged';
        // The recording's minute beside it, in the same transaction: both or neither.
        const recordedPrice = session.record && price > 0 ? this.perRecordedMinute : 0;
        if (recordedPrice > 0)
          await this.ledger.charge(tx, {
            accountId: session.accountId,
            amount: recordedPrice,
            kind: 'recorded_minute',
            reference: minuteReference(sessionId, index),
          });
        await tx
          .update(sessions)
          .set({
            billedMinutes: sql`${sessions.billedMinutes} + 1`,
            creditsCharged: sql`${sessions.creditsCharged} + ${price + recordedPrice}`,
          })
          .where(eq(sessions.id, sessionId));
        if (recordedPrice > 0) creditsCharged.inc({ kind: 'recorded_minute' }, recordedPrice);
        return price > 0 ? 'charged' : 'charged_nothing';
      });
      if (result === 'charged_nothing') return 'charged';
      if (result === 'charged' && this.perMinute > 0) creditsCharged.inc({ kind: 'session_minute' }, this.perMinute);
      return result;
    } catch (error) {
      if (error instanceof InsufficientCredits) return 'insufficient';
      throw error;
    }
  }
}

/**
 * Until when a session's billed minutes are paid: its last minute's charge plus one interval.
 * Undefined when nothing was charged (no minute yet, or minutes cost nothing).
 */
export async function paidUntil(
  q: Queryable,
  session: { id: string; billedMinutes: number },
  intervalSeconds: number,
): Promise<Date | undefined> {
  if (session.billedMinutes === 0) return undefined;
  const [last] = await q
    .select({ at: creditLedger.createdAt })
    .from(creditLedger)
    .where(
      and(
        eq(creditLedger.kind, 'session_minute'),
        eq(creditLedger.reference, minuteReference(session.id, session.billedMinutes - 1)),
      ),
    );
  return last ? new Date(last.at.getTime() + intervalSeconds * 1000) : undefined;
}

/** The ledger reference of a session's minute `index`: one charge each. */
function minuteReference(sessionId: string, index: number): string {
  return `session:${sessionId}:minute:${index}`;
}
