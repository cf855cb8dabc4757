// `oneOf`: an enum for the features' HTTP contracts (their `contract.ts`), validated at the
// edge and shown in /openapi.json as `enum`.
import { t } from 'elysia';

/** An enum without the default Elysia's UnionEnum adds: a default would fill in omitted fields. */
export function oneOf<const T extends readonly [string, ...string[]]>(values: T, description?: string) {
  const schema = t.UnionEnum(values, description ? { description } : {});
  delete (schema as { default?: unknown }).default;
  return schema;
}
