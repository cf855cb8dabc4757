// What an operator can do to accounts, keys and credits. The CLI calls these directly
// when it may open the database itself, or through /internal/admin when the service holds it.
import { accountExists, createAccount } from '../accounts/index.ts';
import { issueApiKey, listApiKeys, revokeApiKey } from '../auth/api-keys.ts';
import { BalanceLimitExceeded, CreditLedger, MAX_BALANCE } from '../credits/index.ts';
import type { Database } from '../db/index.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, setConsolePassword } from '../console/passwords.ts';

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
  createKey(input: { account_id: string; name?: string }): Promise<{ key_id: string; api_key: string }>;
  listKeys(input: { account_id: string }): Promise<unknown[]>;
  revokeKey(input: { account_id: string; key_id: string }): Promise<{ key_id: string; revoked: true }>;
  grantCredits(input: { account_id: string; amount: number }): Promise<{ account_id: string; balance: number }>;
  balance(input: { account_id: string }): Promise<{ account_id: string; balance: number }>;
  setConsolePassword(input: { account_id: string; password: string }): Promise<{ account_id: string; console_sessions_ended: number }>;
}

export function databaseOperations(db: Database): Operations {
  const ledger = new CreditLedger(db);
  const mustExist = async (accountId: string) => {
    if (!(await accountExists(db, accountId))) throw new OperatorError(404, `No account ${accountId}`);
  };
  return {
    async createAccount({ email, credits }) {
      if (credits !== undefined && (!Number.isInteger(credits) || credits < 0)) {
        throw new OperatorError(400, '--credits must be a whole number >= 0');
      }
      if (credits !== undefined && credits > MAX_BALANCE) throw new OperatorError(422, `--credits cannot exceed ${MAX_BALANCE}`);
      try {
        const { account_id, api_key } = await createAccount(db, { email, credits });
        return { account_id, api_key };
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        throw new OperatorError(/already exists/.test(message) ? 409 : 400, message);
      }
    },
    async createKey({ account_id, name }) {
      await mustExist(account_id);
      return issueApiKey(db, account_id, name);
    },
    async listKeys({ account_id }) {
      await mustExist(account_id);
      return listApiKeys(db, account_id);
    },
    async revokeKey({ account_id, key_id }) {
      if (!(await revokeApiKey(db, account_id, key_id))) throw new OperatorError(404, `No live key ${key_id} on account ${account_id}`);
      return { key_id, revoked: true };
    },
    async grantCredits({ account_id, amount }) {
      if (!Number.isInteger(amount) || amount <= 0) throw new OperatorError(400, '--amount must be a whole number > 0');
      await mustExist(account_id);
      try {
        return { account_id, balance: await ledger.grant(account_id, amount) };
      } catch (error) {
        if (error instanceof BalanceLimitExceeded) throw new OperatorError(422, `${error.message}; the balance stays ${(await ledger.balance(account_id)) ?? 0}`);
        throw error;
      }
    },
    async balance({ account_id }) {
      await mustExist(account_id);
      return { account_id, balance: (await ledger.balance(account_id)) ?? 0 };
    },
    async setConsolePassword({ account_id, password }) {
      if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
        throw new OperatorError(400, `the password must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters long`);
      }
      await mustExist(account_id);
      return { account_id, console_sessions_ended: await setConsolePassword(db, account_id, password) };
    },
  };
}
