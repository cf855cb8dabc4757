// What the identity routes and their flows (create.ts, update.ts) are given by the service.
import type { AssetStore } from '../assets/index.ts';
import type { CreditLedger } from '../credits/index.ts';
import type { Database } from '../db/index.ts';
import type { UrlsFor } from '../http/client-urls.ts';
import type { AccountLimits, AttemptLimiter } from '../limits/index.ts';
import type { UploadBounds } from '../media/index.ts';
import type { PipelineRegistry } from '../pipelines/index.ts';
import type { Voices } from '../voices/index.ts';
import type { Retraining } from './retraining.ts';

export interface IdentityDeps {
  db: Database;
  ledger: CreditLedger;
  store: AssetStore;
  pipelines: PipelineRegistry;
  retraining: Retraining;
  uploadBounds: UploadBounds;
  /** The addresses a client is given (signed asset links on the base it reached). */
  urlsFor: UrlsFor;
  onboardingCost: number;
  voices: Voices;
  /** The lease a create holds on its row while it runs (WORK_LEASE_SECONDS). */
  workLeaseSeconds: number;
  limits: AccountLimits;
  /** The hourly count of creates and retrains (identities/training-limits.ts). */
  trainings: AttemptLimiter;
}
