// The agent workers as the control plane last heard of them (their heartbeats).
import { boolean, index, integer, pgTable, text } from 'drizzle-orm/pg-core';
import { instant } from '../db/columns.ts';

export const agentWorkers = pgTable(
  'agent_workers',
  {
    id: text('id').primaryKey(),
    agentName: text('agent_name').notNull(),
    capacity: integer('capacity').notNull(),
    runningJobs: integer('running_jobs').notNull(),
    draining: boolean('draining').notNull().default(false),
    seenAt: instant('seen_at').notNull(),
    /** Past this, the worker counts as gone (it stopped, crashed or lost the network). */
    expiresAt: instant('expires_at').notNull(),
  },
  (t) => [index('agent_workers_name_expires_idx').on(t.agentName, t.expiresAt)],
);
