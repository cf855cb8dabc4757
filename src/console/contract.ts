// The console's own request and response shapes (its identity and session routes reuse the
// public API's). One schema per request type, validated at the edge.
import { t } from 'elysia';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './passwords.ts';

const Email = t.String({
  pattern: '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$',
  maxLength: 254,
  error: 'email must be an email address',
});

export const SignUpBody = t.Object({
  email: Email,
  password: t.String({ minLength: MIN_PASSWORD_LENGTH, maxLength: MAX_PASSWORD_LENGTH }),
});

export const SignInBody = t.Object({
  email: t.String({ minLength: 1, maxLength: 254 }),
  password: t.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH }),
});

export const ChangePasswordBody = t.Object({
  current_password: t.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH }),
  new_password: t.String({ minLength: MIN_PASSWORD_LENGTH, maxLength: MAX_PASSWORD_LENGTH }),
});

export const ConsoleAccount = t.Object({ account_id: t.String(), email: t.String(), balance: t.Integer() });

export const SignedIn = t.Object({ account: ConsoleAccount, csrf_token: t.String() });

/** Whether this browser is signed in: `account` and `csrf_token` only when it is; whether sign-up is open (SIGNUP). */
export const SignInState = t.Object({
  signed_in: t.Boolean(),
  sign_up: t.Boolean(),
  account: t.Optional(ConsoleAccount),
  csrf_token: t.Optional(t.String()),
});

export const IssuedKeyResponse = t.Object({
  key_id: t.String(),
  /** Shown once: only its hash is kept. */
  api_key: t.String(),
  name: t.Union([t.String(), t.Null()]),
  test: t.Boolean(),
});

export const SignedUp = t.Object({ account: ConsoleAccount, csrf_token: t.String(), api_key: IssuedKeyResponse });

export const KeyName = t.String({ minLength: 1, maxLength: 100 });
/** `test`: a test key (`lk_test_…`, docs/api.md#test-mode). */
export const CreateKeyBody = t.Object({ name: KeyName, test: t.Optional(t.Boolean()) });
export const RenameKeyBody = t.Object({ name: KeyName });
export const KeyParams = t.Object({ key_id: t.String() });

export const KeySummary = t.Object({
  key_id: t.String(),
  name: t.Union([t.String(), t.Null()]),
  prefix: t.String(),
  created_at: t.String(),
  last_used_at: t.Union([t.String(), t.Null()]),
  revoked_at: t.Union([t.String(), t.Null()]),
  test: t.Boolean(),
});
