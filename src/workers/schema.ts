// The agent workers as the control plane last heard of them (their heartbeats).
import { boolean, index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

export const agentWorkers = pgTable(
  'agent_workers',
  {
    id: text('id').primaryKey(),
    agentName: text('agent_name').notNull(),
    capacity: integer('capacity').notNull(),
    runningJobs: integer('running_jobs').notNull(),
    draining: boolean('draining').notNull().default(false),
    seenAt: timestamp('seen_at', { withTimezone: true, mode: 'date' }).notNull(),
    /** Past this, the worker counts as gone (it stopped, crashed or lost the network). */
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [index('agent_workers_name_expires_idx').on(t.agentName, t.expiresAt)],
);
