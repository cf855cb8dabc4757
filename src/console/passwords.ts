// Console passwords: how they are hashed, and how an operator sets one. Accounts made with the
// CLI (`likeness accounts create`) have none until then; a forgotten one is reset the same way.
import { eq } from 'drizzle-orm';
import { consoleSessions } from '../auth/schema.ts';
import type { Database } from '../db/index.ts';
import { consoleLogins } from './schema.ts';

/** Sign-up and the operator's set-password share this rule. */
export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 256;

export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, { algorithm: 'argon2id' });
}

/**
 * Gives the account this console password, and signs it out of every browser: a reset is
 * often done because someone else may know the old one. Returns how many sessions ended.
 */
export async function setConsolePassword(db: Database, accountId: string, password: string): Promise<number> {
  const passwordHash = await hashPassword(password);
  return db.transaction(async (tx) => {
    await tx
      .insert(consoleLogins)
      .values({ accountId, passwordHash })
      .onConflictDoUpdate({ target: consoleLogins.accountId, set: { passwordHash } });
    const ended = await tx
      .delete(consoleSessions)
      .where(eq(consoleSessions.accountId, accountId))
      .returning({ id: consoleSessions.id });
    return ended.length;
  });
}
