// TypeBox pieces the shared messages are built from. Plain TypeBox, not Elysia's `t`: the
// agent validates with these too, and never loads Elysia.
import { type TLiteral, type TUnion, Type } from '@sinclair/typebox';

/** One of a list of strings, as a union of literals (its Static type is the list's union). */
export function literalUnion<const T extends readonly [string, ...string[]]>(
  values: T,
  options: { description?: string } = {},
): TUnion<TLiteral<T[number]>[]> {
  return Type.Union(values.map((value) => Type.Literal(value)) as TLiteral<T[number]>[], options);
}

/** An http(s) address. A pattern, not TypeBox's `uri` format: formats are registered by Elysia, which the agent does not load. */
export const HttpUrl = Type.String({ pattern: '^https?://\\S+$' });

/** A moment, as the API writes every one: ISO 8601 (RFC 3339) with its time zone. */
export const Timestamp = Type.String({ format: 'date-time' });
