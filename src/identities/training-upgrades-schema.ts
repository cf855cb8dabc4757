import { integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { identities } from './schema.ts';

/**
 * The background upgrades of identities' trainings (training-upgrades.ts): a row per identity
 * an upgrade was tried for, with its lease while it runs, its failures (retried with backoff),
 * and the files of the training it replaced until they are deleted.
 */
export const trainingUpgrades = pgTable('training_upgrades', {
  identityId: text('identity_id')
    .primaryKey()
    .references(() => identities.id, { onDelete: 'cascade' }),
  /** While an upgrade runs, the process doing it keeps this in the future (a lease, as identities.worked_until). */
  workedUntil: timestamp('worked_until', { withTimezone: true, mode: 'date' }),
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
  nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, mode: 'date' }),
  /** Files of replaced trainings, deleted once `retireAfter` passes (sessions dispatched before may still fetch them). */
  retiredKeys: jsonb('retired_keys').$type<string[]>(),
  retireAfter: timestamp('retire_after', { withTimezone: true, mode: 'date' }),
  /** The version the last successful upgrade trained to. */
  upgradedToVersion: integer('upgraded_to_version'),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});
