// What an `outcome_schema` may be (docs/api.md#outcomes): the safe subset of JSON Schema that
// tools' parameters take (src/tools/parameters.ts, the same 422s), an object of at most
// OUTCOME_MAX_FIELDS fields, each with a description (what the model looks for in the
// conversation). And whether a written outcome fits its schema.
import Ajv from 'ajv';
import { OUTCOME_MAX_FIELDS, writtenOutcomeSchema } from '../contract/index.ts';
import type { FieldProblem } from '../http/errors.ts';
import { parametersProblems } from '../tools/index.ts';

/** What is wrong with `schema` as an outcome schema, located under `loc`; empty when it may be kept. */
export function outcomeSchemaProblems(schema: unknown, loc: FieldProblem['loc']): FieldProblem[] {
  const problems = parametersProblems(schema, loc, 'outcome_schema');
  if (problems.length > 0) return problems;
  const properties = (schema as { properties: Record<string, Record<string, unknown>> }).properties;
  const names = Object.keys(properties);
  if (names.length === 0 || names.length > OUTCOME_MAX_FIELDS)
    return [
      {
        loc: [...loc, 'properties'],
        msg: `outcome_schema needs 1 to ${OUTCOME_MAX_FIELDS} properties, the fields to fill in`,
        type: 'schema_invalid',
      },
    ];
  return names
    .filter((name) => typeof properties[name]!.description !== 'string' || !properties[name]!.description)
    .map((name) => ({
      loc: [...loc, 'properties', name, 'description'],
      msg: `${name} needs a description: what the conversation must say for it to be filled in`,
      type: 'description_required',
    }));
}

/**
 * Why `values` do not fit the written form of `schema` (each field, its value or null), in one
 * line; undefined when they do. Each check compiles in a throwaway Ajv: a few per ended session.
 */
export function outcomeMismatch(schema: Record<string, unknown>, values: Record<string, unknown>): string | undefined {
  const validate = new Ajv({ strict: false, allErrors: true, validateSchema: false }).compile(
    writtenOutcomeSchema(schema),
  );
  if (validate(values)) return undefined;
  const reasons = (validate.errors ?? []).map((error) =>
    `${error.instancePath.replaceAll('/', '.').slice(1) || 'the outcome'} ${error.message ?? 'is invalid'}`.trim(),
  );
  return `the outcome did not fit its schema: ${[...new Set(reasons)].slice(0, 5).join('; ')}`;
}

/**
 * An identity's `outcome_schema` form field (multipart carries text): the schema as JSON, or
 * `null` to clear it (PATCH). `value` is undefined when the field was not sent or is wrong.
 */
export function outcomeSchemaFormField(raw: string | undefined): {
  value?: Record<string, unknown> | null;
  problems: FieldProblem[];
} {
  if (raw === undefined) return { problems: [] };
  const loc = ['body', 'outcome_schema'];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return {
      problems: [
        { loc, msg: 'outcome_schema must be a JSON Schema object, as JSON text (or null)', type: 'json_invalid' },
      ],
    };
  }
  if (parsed === null) return { value: null, problems: [] };
  const problems = outcomeSchemaProblems(parsed, loc);
  return problems.length > 0 ? { problems } : { value: parsed as Record<string, unknown>, problems };
}
