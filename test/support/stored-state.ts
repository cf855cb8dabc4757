// What a refused request must leave as it was: the identities and ledger rows, the stored
// files, and the account's balance.
import type { TestAccount, TestService } from './service.ts';

export async function storedState(service: TestService, account: TestAccount) {
  return {
    identities: await service.count('identities'),
    ledger: await service.count('credit_ledger'),
    files: await service.assetKeys(),
    balance: await service.services.ledger.balance(account.accountId),
  };
}
