// A PATCH changes only what its body sent (docs/api.md): a field left out keeps its value, one sent
// (null included) replaces it. Each feature names which of its body's fields go to which column.

type Columns<Body> = { [Field in keyof Body]?: string };

/** What `.set()` of a drizzle update is given: each sent field under its column's name, and `updatedAt`. */
export type SentFields<Body, Map extends Columns<Body>> = {
  [Field in keyof Map as Map[Field] & string]?: Exclude<Body[Field & keyof Body], undefined>;
} & { updatedAt: Date };

/** The body's fields that `columns` names and the request sent, renamed to their columns; `updatedAt` now. */
export function sentFields<Body extends object, const Map extends Columns<Body>>(
  body: Body,
  columns: Map,
): SentFields<Body, Map> {
  const set: Record<string, unknown> = { updatedAt: new Date() };
  for (const [field, column] of Object.entries(columns) as [keyof Body, string][])
    if (body[field] !== undefined) set[column] = body[field];
  return set as SentFields<Body, Map>;
}
