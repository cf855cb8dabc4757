// A JSON Schema as node-llama-cpp's grammar generator takes it (its GbnfJsonSchema): the written
// outcome's schema (src/contract/outcomes.ts) uses `type: [t, "null"]` for a nullable field,
// which the generator takes for the simple types only, so a nullable object or array becomes a
// oneOf, and an enum loses its `type`. Bounds the grammar cannot express (minimum, maximum) are
// dropped: the control plane checks them on the written outcome. Lengths it can (a list's items,
// a string's characters) are kept: they also stop a small model writing one list without end.
type Schema = Record<string, unknown>;

const isRecord = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function grammarSchema(schema: Schema): Schema {
  if (Array.isArray(schema.enum)) return { enum: schema.enum, ...described(schema) };
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
  const nullable = types.includes('null');
  const [type] = types.filter((t) => t !== 'null');
  if (type !== 'object' && type !== 'array') {
    const { minimum: _min, maximum: _max, ...simple } = schema;
    return simple;
  }
  const inner: Schema =
    type === 'array'
      ? {
          type,
          ...(isRecord(schema.items) && { items: grammarSchema(schema.items) }),
          ...(typeof schema.maxItems === 'number' && { maxItems: schema.maxItems }),
        }
      : {
          type,
          properties: Object.fromEntries(
            Object.entries(isRecord(schema.properties) ? schema.properties : {}).map(([name, property]) => [
              name,
              grammarSchema(property as Schema),
            ]),
          ),
          ...(Array.isArray(schema.required) && { required: schema.required }),
          additionalProperties: false,
        };
  return nullable ? { oneOf: [inner, { type: 'null' }], ...described(schema) } : { ...inner, ...described(schema) };
}

const described = (schema: Schema) =>
  typeof schema.description === 'string' ? { description: schema.description } : {};
