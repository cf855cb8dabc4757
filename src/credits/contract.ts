// The HTTP contract of /v1/credits and /v1/usage (docs/api.md#credits-read, #usage): one schema
// per request and response, validated at the edge and shown in /openapi.json.
import { t } from 'elysia';
import { Timestamp } from '../contract/index.ts';
import { oneOf } from '../http/enum-schema.ts';
import { LEDGER_KINDS } from './schema.ts';

export const LedgerEntryResponse = t.Object({
  entry_id: t.String(),
  kind: oneOf(
    LEDGER_KINDS,
    '`grant`: credits added; `onboarding`: an identity; `session_minute`: a minute an avatar streamed; `recorded_minute`: the recording of that minute, in a recorded session; `session_hold`/`session_release`: a first minute set aside at a start and given back; `adjustment`: by the operator.',
  ),
  amount: t.Integer({ description: 'Signed: negative for what was spent or set aside.' }),
  reference: t.String({ description: 'What the entry is for: `identity:idn_…`, `session:ses_…:minute:3`, …' }),
  created_at: Timestamp,
});

const LowBalanceThreshold = t.Integer({
  minimum: 0,
  maximum: 2_147_483_647,
  description:
    'A charge that takes the balance below this sends the `credits.low` webhook event; 0: never. Default 100.',
});

export const CreditsQuery = t.Object({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 1000, description: 'Entries per page; default 100.' })),
  after: t.Optional(t.String({ description: 'entry_id of the last entry of the previous page.' })),
});

export const CreditsResponse = t.Object({
  balance: t.Integer({ description: 'Credits the account holds now.' }),
  entries: t.Array(LedgerEntryResponse, { description: 'The ledger, newest first.' }),
  has_more: t.Boolean({ description: 'More entries follow: ask again with `after` set to the last entry_id.' }),
  low_balance_threshold: LowBalanceThreshold,
});

export const CreditSettingsRequest = t.Object({ low_balance_threshold: LowBalanceThreshold });

export const CreditSettingsResponse = t.Object({ balance: t.Integer(), low_balance_threshold: LowBalanceThreshold });

export const USAGE_GRANULARITIES = ['day', 'hour'] as const;

export const UsageQuery = t.Object({
  from: t.Optional(
    t.String({
      description:
        'Start (inclusive): an ISO 8601 date or date-time, UTC when no offset is given. Default: 30 days before `to`.',
    }),
  ),
  to: t.Optional(t.String({ description: 'End (exclusive): an ISO 8601 date or date-time. Default: now.' })),
  granularity: t.Optional(oneOf(USAGE_GRANULARITIES, 'Bucket size, in UTC; default `day`.')),
});

const Spent = t.Object({
  onboarding: t.Integer({ description: 'Credits spent on identities.' }),
  session_minute: t.Integer({ description: 'Credits spent on minutes an avatar streamed.' }),
  recorded_minute: t.Integer({ description: 'Credits spent on recording those minutes (recorded sessions).' }),
});

export const UsageBucket = t.Object({
  start: t.String({ format: 'date-time', description: 'The bucket covers [start, start + granularity).' }),
  sessions: t.Integer({ description: 'Sessions started.' }),
  avatar_minutes: t.Integer({ description: 'Minutes billed while an avatar streamed.' }),
  visitor_seconds: t.Integer({
    description: 'Seconds visitors were in the room with an avatar, in the sessions started in the bucket.',
  }),
  streamed_seconds: t.Integer({ description: 'Seconds avatars streamed, in the sessions started in the bucket.' }),
  identities: t.Integer({ description: 'Identities charged for (created and trained).' }),
  credits_spent: Spent,
  credits_granted: t.Integer({ description: 'Credits added (grants and adjustments).' }),
});

export const UsageResponse = t.Object({
  from: Timestamp,
  to: Timestamp,
  granularity: oneOf(USAGE_GRANULARITIES),
  buckets: t.Array(UsageBucket, { description: 'Every bucket of the range, oldest first, empty ones included.' }),
  totals: t.Omit(UsageBucket, ['start']),
});
