// Schema building blocks shared by the features' contracts.
import { t } from 'elysia';

/** An enum without the default Elysia's UnionEnum adds: a default would fill in omitted fields. */
export function oneOf<const T extends readonly [string, ...string[]]>(values: T, description?: string) {
  const schema = t.UnionEnum(values, description ? { description } : {});
  delete (schema as { default?: unknown }).default;
  return schema;
}

export const ErrorResponse = t.Object({ detail: t.String() }, { description: 'An error with a message.' });

export const ValidationErrorResponse = t.Object(
  {
    detail: t.Array(
      t.Object({
        loc: t.Array(t.Union([t.String(), t.Integer()])),
        msg: t.String(),
        type: t.String(),
      }),
    ),
  },
  { description: 'Field-level validation problems.' },
);
