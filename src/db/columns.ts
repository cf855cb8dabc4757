// The columns every table writes the same way, written once: a moment is always a timestamptz
// read as a Date, and a row that belongs to another goes when that one is deleted.
import type { PgColumn } from 'drizzle-orm/pg-core';
import { text, timestamp } from 'drizzle-orm/pg-core';

/** A moment, stored with its time zone, read as a Date. */
export const instant = <N extends string>(name: N) => timestamp(name, { withTimezone: true, mode: 'date' });

/** When the row was added. */
export const createdAt = () => instant('created_at').notNull().defaultNow();

/** When the row last changed (set by each update). */
export const updatedAt = () => instant('updated_at').notNull().defaultNow();

/** The id of the row this one belongs to: deleting that row deletes this one. */
export const belongsTo = <N extends string>(name: N, parent: () => PgColumn) =>
  text(name).references(parent, { onDelete: 'cascade' });
