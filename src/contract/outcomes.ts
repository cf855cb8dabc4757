// A session's outcome (docs/api.md#outcomes): the fields a conversation achieved, as a JSON object
// whose shape the customer gives (`outcome_schema`: an object of described properties, in the
// safe subset of tools' parameters). Every written outcome holds each of its fields, the value
// the visitor gave or null for one they did not. The control plane checks the schema at the edge
// and the job's outcome against it; the job asks its model for an object of this shape.

/** Fields an outcome may have; each needs a description (what the model looks for). */
export const OUTCOME_MAX_FIELDS = 50;

type Schema = Record<string, unknown>;

const isRecord = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `schema`, which may also be null (its enum too). */
function orNull(schema: Schema): Schema {
  return {
    ...schema,
    type: [schema.type, 'null'],
    ...(Array.isArray(schema.enum) && { enum: [...schema.enum, null] }),
  };
}

/**
 * The schema of a written outcome: every field of `outcomeSchema` present, its value or null, no
 * other field. Nested objects are closed and list every property as required, the optional ones
 * nullable: what OpenAI's strict structured output takes, and what the control plane checks.
 */
export function writtenOutcomeSchema(outcomeSchema: Schema): Schema {
  const { description: _, ...written } = closed(outcomeSchema, true);
  return written;
}

function closed(schema: Schema, allNullable: boolean): Schema {
  if (schema.type === 'array' && isRecord(schema.items)) return { ...schema, items: closed(schema.items, false) };
  if (schema.type !== 'object') return schema;
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const fields = Object.entries(properties).map(([name, property]) => {
    const inner = closed(property as Schema, false);
    return [name, allNullable || !required.has(name) ? orNull(inner) : inner] as const;
  });
  return {
    type: 'object',
    ...(typeof schema.description === 'string' && { description: schema.description }),
    properties: Object.fromEntries(fields),
    required: fields.map(([name]) => name),
    additionalProperties: false,
  };
}

/** The outcome's fields, in the schema's order, each with its description (what the model is told to look for) and schema. */
export function outcomeFields(
  outcomeSchema: Schema,
): { name: string; description: string; schema: Record<string, unknown> }[] {
  const properties = isRecord(outcomeSchema.properties) ? outcomeSchema.properties : {};
  return Object.entries(properties).map(([name, property]) => ({
    name,
    description: isRecord(property) && typeof property.description === 'string' ? property.description : '',
    schema: isRecord(property) ? property : {},
  }));
}
