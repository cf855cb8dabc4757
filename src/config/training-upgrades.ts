// Settings of the background training upgrades (src/identities/training-upgrades.ts): identities
// trained by an older version of their pipeline's training are trained again from their stored
// photo, a few at a time, free of charge.
import { type Env, integer } from './environment.ts';

export interface TrainingUpgradeSettings {
  /**
   * TRAINING_UPGRADES_CONCURRENT (1): upgrades running at once, in each API process and across
   * every process on the database; 0 turns upgrades off.
   */
  concurrent: number;
  /** TRAINING_UPGRADES_RETRY_SECONDS (300): the wait after a first failed upgrade; it doubles with each failure, up to a day. */
  retrySeconds: number;
  /**
   * TRAINING_UPGRADES_KEEP_OLD_SECONDS: how long the replaced training's files stay after an
   * upgrade, so that a session dispatched just before it still downloads them and an `image`
   * link read before still opens. Default: two ASSET_URL_TTL, the longest a link lives.
   */
  keepOldSeconds: number;
}

export function loadTrainingUpgradeSettings(env: Env, assetUrlTtlSeconds: number): TrainingUpgradeSettings {
  return {
    concurrent: integer(env, 'TRAINING_UPGRADES_CONCURRENT', 1, 0),
    retrySeconds: integer(env, 'TRAINING_UPGRADES_RETRY_SECONDS', 300, 1),
    keepOldSeconds: integer(env, 'TRAINING_UPGRADES_KEEP_OLD_SECONDS', 2 * assetUrlTtlSeconds, 0),
  };
}
