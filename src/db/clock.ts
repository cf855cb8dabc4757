// Times on the database's clock, for queries: every process agrees on it, whatever their own
// clocks say (leases, windows, ages, deadlines). The one place that writes an interval
// (test/architecture/lint/one-database-clock.grit).
import { type SQL, type SQLWrapper, sql } from 'drizzle-orm';

/** A number of seconds: a value, a column or an expression. */
type Seconds = number | SQLWrapper;

/** `time + seconds`. */
export const secondsAfter = (time: SQLWrapper, seconds: Seconds): SQL =>
  sql`${time} + make_interval(secs => ${seconds})`;

/** `now() + seconds`. */
export const secondsFromNow = (seconds: Seconds): SQL => secondsAfter(sql`now()`, seconds);

/** `now() - seconds`. */
export const secondsAgo = (seconds: Seconds): SQL => sql`now() - make_interval(secs => ${seconds})`;

/** `now() - days` (whole days: a retention). */
export const daysAgo = (days: Seconds): SQL => sql`now() - make_interval(days => ${days}::int)`;
