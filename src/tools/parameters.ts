// A tool's `parameters` (docs/api.md#tools): a JSON Schema the model fills in. Only a small,
// safe subset is taken (the keywords every model provider understands, no references, no
// patterns a regex engine could choke on), bounded in depth and size, and compiled with ajv
// on save; compiled again (and kept) to check the model's arguments before any call.
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import type { FieldProblem } from '../http/errors.ts';

export type JsonSchemaObject = Record<string, unknown>;

/** The serialized schema's largest size, and how deep schemas may nest (the top object is 1). */
export const PARAMETERS_MAX_BYTES = 16 * 1024;
export const PARAMETERS_MAX_DEPTH = 5;
const DESCRIPTION_MAX_CHARS = 1_000;
const ENUM_MAX_VALUES = 100;
/** Argument names: what every model provider accepts. */
const PROPERTY_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** What a tool without parameters is given (end_session's default). */
export const EMPTY_PARAMETERS: JsonSchemaObject = { type: 'object', properties: {} };

const TYPES = ['string', 'number', 'integer', 'boolean', 'array', 'object'] as const;
type SchemaType = (typeof TYPES)[number];

/** The keywords each type may carry, beside `type` and `description`. */
const KEYWORDS: Record<SchemaType, readonly string[]> = {
  string: ['enum', 'minLength', 'maxLength'],
  number: ['enum', 'minimum', 'maximum'],
  integer: ['enum', 'minimum', 'maximum'],
  boolean: ['enum'],
  array: ['items'],
  object: ['properties', 'required', 'additionalProperties'],
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const problem = (loc: FieldProblem['loc'], msg: string, type: string): FieldProblem => ({ loc, msg, type });

/**
 * What is wrong with `parameters` (or another field in the same subset, named `field` in the
 * messages: an outcome's schema), located under `loc` (`["body","parameters"]`), each problem
 * naming the keyword at fault; empty when it may be saved.
 */
export function parametersProblems(
  parameters: unknown,
  loc: FieldProblem['loc'],
  field = 'parameters',
): FieldProblem[] {
  if (!isRecord(parameters)) return [problem(loc, `${field} must be a JSON Schema object`, 'schema_invalid')];
  const size = Buffer.byteLength(JSON.stringify(parameters));
  if (size > PARAMETERS_MAX_BYTES)
    return [problem(loc, `${field} is ${size} bytes; at most ${PARAMETERS_MAX_BYTES} are taken`, 'schema_too_large')];
  if (parameters.type !== 'object')
    return [problem([...loc, 'type'], `${field} must be a schema of type "object"`, 'schema_invalid')];
  if (!isRecord(parameters.properties))
    return [
      problem([...loc, 'properties'], `${field} needs \`properties\`, an object (it may be empty)`, 'schema_invalid'),
    ];
  const problems = schemaProblems(parameters, loc, 1);
  if (problems.length > 0) return problems;
  try {
    compile(parameters);
  } catch (error) {
    return [problem(loc, `${field} is not a valid JSON Schema: ${(error as Error).message}`, 'schema_invalid')];
  }
  return [];
}

function schemaProblems(schema: unknown, loc: FieldProblem['loc'], depth: number): FieldProblem[] {
  if (!isRecord(schema)) return [problem(loc, 'must be a schema object', 'schema_invalid')];
  if (depth > PARAMETERS_MAX_DEPTH)
    return [problem(loc, `schemas nest at most ${PARAMETERS_MAX_DEPTH} deep`, 'schema_too_deep')];
  const type = schema.type;
  if (!TYPES.includes(type as SchemaType))
    return [problem([...loc, 'type'], `type must be one of: ${TYPES.join(', ')}`, 'schema_invalid')];
  const allowed = new Set(['type', 'description', ...KEYWORDS[type as SchemaType]]);
  const problems: FieldProblem[] = [];
  for (const [keyword, value] of Object.entries(schema)) {
    const at = [...loc, keyword];
    if (!allowed.has(keyword)) {
      problems.push(
        problem(at, `${keyword} is not supported on a schema of type ${type}`, 'schema_keyword_unsupported'),
      );
      continue;
    }
    const wrong = keywordProblem(keyword, value, schema, type as SchemaType);
    if (wrong) problems.push(problem(at, wrong, 'schema_invalid'));
    else if (keyword === 'items') problems.push(...schemaProblems(value, at, depth + 1));
    else if (keyword === 'properties')
      for (const [name, property] of Object.entries(value as Record<string, unknown>)) {
        if (!PROPERTY_NAME.test(name))
          problems.push(problem([...at, name], 'argument names are 1–64 letters, digits, _, . or -', 'schema_invalid'));
        else problems.push(...schemaProblems(property, [...at, name], depth + 1));
      }
  }
  return problems;
}

/** What is wrong with one keyword's value, if anything. */
function keywordProblem(keyword: string, value: unknown, schema: Record<string, unknown>, type: SchemaType) {
  const bound = (n: unknown) => typeof n === 'number' && Number.isFinite(n);
  const count = (n: unknown) => Number.isInteger(n) && (n as number) >= 0;
  switch (keyword) {
    case 'description':
      return typeof value === 'string' && value.length <= DESCRIPTION_MAX_CHARS
        ? undefined
        : `description must be text of at most ${DESCRIPTION_MAX_CHARS} characters`;
    case 'enum': {
      if (!Array.isArray(value) || value.length === 0 || value.length > ENUM_MAX_VALUES)
        return `enum must list 1 to ${ENUM_MAX_VALUES} values`;
      const fits = (v: unknown) =>
        type === 'string'
          ? typeof v === 'string'
          : type === 'boolean'
            ? typeof v === 'boolean'
            : type === 'integer'
              ? Number.isInteger(v)
              : bound(v);
      if (!value.every(fits)) return `every enum value must be of type ${type}`;
      return new Set(value).size === value.length ? undefined : 'enum values must differ';
    }
    case 'minimum':
    case 'maximum':
      return bound(value) ? undefined : `${keyword} must be a number`;
    case 'minLength':
    case 'maxLength':
      return count(value) ? undefined : `${keyword} must be a whole number, 0 or more`;
    case 'properties':
      return isRecord(value) ? undefined : 'properties must be an object of argument names to schemas';
    case 'required': {
      const names = isRecord(schema.properties) ? Object.keys(schema.properties) : [];
      if (!Array.isArray(value) || !value.every((n) => typeof n === 'string'))
        return 'required must be a list of argument names';
      if (new Set(value).size !== value.length) return 'required names an argument twice';
      const unknown = value.find((n) => !names.includes(n));
      return unknown === undefined ? undefined : `required names ${unknown}, which is not in properties`;
    }
    case 'additionalProperties':
      return typeof value === 'boolean' ? undefined : 'additionalProperties must be true or false';
    default:
      return undefined; // type (checked above), items (a schema, checked by the caller)
  }
}

// ajv keeps every schema it compiles for as long as it lives (its cache, and the generated
// code's scope, which removeSchema leaves), so each Ajv here lives no longer than what it
// compiled. Strict: a keyword ajv does not know, or one misplaced, fails the compile rather than
// being ignored. No meta-schema: the subset check above is stricter, and compiling draft-07's
// for every fresh Ajv would triple the cost.
const newAjv = () => new Ajv({ strict: true, allErrors: true, validateSchema: false, meta: false });

/** Compiles once and keeps nothing: what a save checks (a refused or replaced schema leaves no trace). */
function compile(schema: JsonSchemaObject): void {
  newAjv().compile(schema);
}

/** Compilations before the validators of tool calls start again with a fresh Ajv (memory stays bounded). */
const COMPILED_MAX = 1_000;
/** The validators of tool calls by schema text, and the one Ajv that holds them all. */
let validators = { ajv: newAjv(), byText: new Map<string, ValidateFunction>(), compiles: 0 };

function validatorOf(schema: JsonSchemaObject): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = validators.byText.get(key);
  if (!validate) {
    if (validators.compiles >= COMPILED_MAX) validators = { ajv: newAjv(), byText: new Map(), compiles: 0 };
    validators.compiles++;
    validate = validators.ajv.compile(schema);
    validators.byText.set(key, validate);
  }
  return validate;
}

/** Why the model's `args` break the tool's schema, in words it can act on; undefined when they fit. */
export function argumentsProblem(parameters: JsonSchemaObject, args: Record<string, unknown>): string | undefined {
  const validate = validatorOf(parameters);
  if (validate(args)) return undefined;
  const reasons = (validate.errors ?? []).map(describe);
  return `The arguments do not fit the tool's parameters: ${[...new Set(reasons)].join('; ')}. Call it again with corrected arguments.`;
}

/** One ajv error as a sentence naming the argument (`city is required`, `date must be string`). */
function describe(error: ErrorObject): string {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
  const within = (name: string) => (path ? `${path}.${name}` : name);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${within(String(params.missingProperty))} is required`;
    case 'additionalProperties':
      return `${within(String(params.additionalProperty))} is not a parameter of this tool`;
    case 'enum':
      return `${path || 'the arguments'} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return `${path || 'the arguments'} ${error.message ?? 'is invalid'}`;
  }
}
