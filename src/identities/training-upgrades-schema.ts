import { integer, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { belongsTo, instant, updatedAt } from '../db/columns.ts';
import { identities } from './schema.ts';

/**
 * The background upgrades of identities' trainings (training-upgrades.ts): a row per identity
 * an upgrade was tried for, with its lease while it runs, its failures (retried with backoff),
 * and the files of the training it replaced until they are deleted.
 */
export const trainingUpgrades = pgTable('training_upgrades', {
  identityId: belongsTo('identity_id', () => identities.id).primaryKey(),
  /** While an upgrade runs, the process doing it keeps this in the future (a lease, as identities.worked_until). */
  workedUntil: instant('worked_until'),
  /**
   * The folder the running upgrade writes its training into; one left set by a process that
   * died mid-upgrade is deleted by the next attempt, and a write must still find its own here.
   */
  prefix: text('prefix'),
  /** Failed attempts since the last success. */
  attempts: integer('attempts').notNull().default(0),
  /** Why the last attempt failed (for the operator; never shown to the account). */
  lastError: text('last_error'),
  /** Not tried again before this (the backoff after a failure). */
  nextAttemptAt: instant('next_attempt_at'),
  /** Files of replaced trainings, deleted once `retireAfter` passes (sessions dispatched before may still fetch them). */
  retiredKeys: jsonb('retired_keys').$type<string[]>(),
  retireAfter: instant('retire_after'),
  /** The version the last successful upgrade trained to. */
  upgradedToVersion: integer('upgraded_to_version'),
  updatedAt: updatedAt(),
});
