// What an operator can do to accounts, keys and credits. The CLI calls these directly
// when it may open the database itself, or through /internal/admin when the service holds it.

import { eq } from 'drizzle-orm';
import { accountExists, isTestAccount } from '../accounts/index.ts';
import { accounts } from '../accounts/schema.ts';
import { issueApiKey, listApiKeys, revokeApiKey } from '../auth/index.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, setConsolePassword } from '../console/index.ts';
import { BalanceLimitExceeded, CreditLedger, MAX_BALANCE } from '../credits/index.ts';
import type { Database } from '../db/index.ts';
import { type AccountLimits, LIMIT_NAMES, limitsOf } from '../limits/index.ts';
import { createAccount } from '../new-accounts/index.ts';

export class OperatorError extends Error {
  constructor(
    readonly status: 400 | 404 | 409 | 422,
    message: string,
  ) {
    super(message);
  }
}

export interface Operations {
  createAccount(input: { email: string; credits?: number }): Promise<{ account_id: string; api_key: string }>;
  /** `test`: a test key (`lk_test_…`), on the account's test account. */
  createKey(input: {
    account_id: string;
    name?: string;
    test?: boolean;
  }): Promise<{ key_id: string; api_key: string; test: boolean }>;
  listKeys(input: { account_id: string }): Promise<unknown[]>;
  revokeKey(input: { account_id: string; key_id: string }): Promise<{ key_id: string; revoked: true }>;
  grantCredits(input: { account_id: string; amount: number }): Promise<{ account_id: string; balance: number }>;
  balance(input: { account_id: string }): Promise<{ account_id: string; balance: number }>;
  setConsolePassword(input: {
    account_id: string;
    password: string;
  }): Promise<{ account_id: string; console_sessions_ended: number }>;
  /** Sets some of the account's own limits (the rest stay); `reset` drops them all first. */
  setLimits(input: { account_id: string; limits: Partial<AccountLimits>; reset?: boolean }): Promise<LimitsView>;
  showLimits(input: { account_id: string }): Promise<LimitsView>;
}

/** An account's limits in force, and which of them are its own (the rest are the service's). */
export interface LimitsView {
  account_id: string;
  limits: AccountLimits;
  own: Partial<AccountLimits>;
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: the operator's operations as one object (the CLI's and the admin API's Operations), each a few lines
export function databaseOperations(db: Database, defaults: { limits: AccountLimits }): Operations {
  const ledger = new CreditLedger(db);
  const limitsView = async (accountId: string): Promise<LimitsView> => {
    const [row] = await db.select({ limits: accounts.limits }).from(accounts).where(eq(accounts.id, accountId));
    if (!row) throw new OperatorError(404, `No account ${accountId}`);
    return { account_id: accountId, limits: limitsOf(defaults.limits, row.limits), own: row.limits ?? {} };
  };
  const mustExist = async (accountId: string) => {
    if (!(await accountExists(db, accountId))) throw new OperatorError(404, `No account ${accountId}`);
  };
  return {
    async createAccount({ email, credits }) {
      if (credits !== undefined && (!Number.isInteger(credits) || credits < 0)) {
        throw new OperatorError(400, '--credits must be a whole number >= 0');
      }
      if (credits !== undefined && credits > MAX_BALANCE)
        throw new OperatorError(422, `--credits cannot exceed ${MAX_BALANCE}`);
      try {
        const { account_id, api_key } = await createAccount(db, { email, credits });
        return { account_id, api_key };
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        throw new OperatorError(/already exists/.test(message) ? 409 : 400, message);
      }
    },
    async createKey({ account_id, name, test }) {
      await mustExist(account_id);
      if (isTestAccount(account_id))
        throw new OperatorError(422, `${account_id} is a test account: name its live account, with --test`);
      return db.transaction((tx) => issueApiKey(tx, account_id, name, { test }));
    },
    async listKeys({ account_id }) {
      await mustExist(account_id);
      return listApiKeys(db, account_id);
    },
    async revokeKey({ account_id, key_id }) {
      if (!(await revokeApiKey(db, account_id, key_id)))
        throw new OperatorError(404, `No live key ${key_id} on account ${account_id}`);
      return { key_id, revoked: true };
    },
    async grantCredits({ account_id, amount }) {
      if (!Number.isInteger(amount) || amount <= 0) throw new OperatorError(400, '--amount must be a whole number > 0');
      await mustExist(account_id);
      try {
        return { account_id, balance: await ledger.grant(account_id, amount) };
      } catch (error) {
        if (error instanceof BalanceLimitExceeded)
          throw new OperatorError(
            422,
            `${error.message}; the balance stays ${(await ledger.balance(account_id)) ?? 0}`,
          );
        throw error;
      }
    },
    async balance({ account_id }) {
      await mustExist(account_id);
      return { account_id, balance: (await ledger.balance(account_id)) ?? 0 };
    },
    async setConsolePassword({ account_id, password }) {
      if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
        throw new OperatorError(
          400,
          `the password must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters long`,
        );
      }
      await mustExist(account_id);
      return { account_id, console_sessions_ended: await setConsolePassword(db, account_id, password) };
    },
    async setLimits({ account_id, limits, reset }) {
      for (const [name, value] of Object.entries(limits)) {
        if (!(LIMIT_NAMES as readonly string[]).includes(name))
          throw new OperatorError(400, `no limit "${name}" (there are ${LIMIT_NAMES.join(', ')})`);
        if (!Number.isInteger(value) || (value as number) < 0 || (value as number) > 1_000_000)
          throw new OperatorError(400, `${name} must be a whole number from 0 (no limit) to 1000000`);
      }
      const current = await limitsView(account_id);
      const own = { ...(reset ? {} : current.own), ...limits };
      await db
        .update(accounts)
        .set({ limits: Object.keys(own).length ? own : null })
        .where(eq(accounts.id, account_id));
      return limitsView(account_id);
    },
    showLimits: ({ account_id }) => limitsView(account_id),
  };
}
