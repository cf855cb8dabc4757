// The error shape (docs/api.md#errors): every error is JSON `{detail}`; `detail` is a string,
// except 422, where it is a FastAPI-style list of `{loc, msg, type}` field problems.
import { ValueErrorType } from '@sinclair/typebox/errors';
import { Elysia, t, type ValidationError } from 'elysia';
import { newId } from '../db/ids.ts';
import { log } from '../logging/index.ts';

/** The error bodies, for the routes' response schemas (and so the OpenAPI document). */
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

/** The statuses a route may answer with an error. */
export type ErrorStatus = 401 | 402 | 403 | 404 | 409 | 413 | 415 | 422 | 429 | 500 | 502 | 503 | 504;
type ErrorBodies<S extends ErrorStatus> = {
  [K in S]: K extends 422 ? typeof ValidationErrorResponse : typeof ErrorResponse;
};

/**
 * A route's error answers for its response schema (and so the OpenAPI document), by status:
 * `{ 200: Thing, ...errorResponses(401, 404) }`. Every status has the `{detail}` body, 422 the
 * field problems': written once here, not by hand in each route module.
 */
export function errorResponses<const S extends ErrorStatus>(...statuses: S[]): ErrorBodies<S> {
  return Object.fromEntries(
    statuses.map((status) => [status, status === 422 ? ValidationErrorResponse : ErrorResponse]),
  ) as ErrorBodies<S>;
}

export interface FieldProblem {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string | FieldProblem[],
    /** Sent with the error (e.g. `retry-after` with a 503). */
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof detail === 'string' ? detail : detail.map((d) => d.msg).join('; '));
  }
}

export function invalid(loc: FieldProblem['loc'], msg: string, type: string): ApiError {
  return new ApiError(422, [{ loc, msg, type }]);
}

export const notFound = (what: string) => new ApiError(404, `${what} not found`);

/** TypeBox error kinds mapped to short, FastAPI-like type names. */
const TYPE_NAMES: Record<string, string> = {
  ObjectRequiredProperty: 'missing',
  StringMinLength: 'string_too_short',
  StringMaxLength: 'string_too_long',
  StringPattern: 'string_pattern_mismatch',
  String: 'string_type',
  Boolean: 'bool_type',
  Integer: 'int_type',
  Number: 'number_type',
  NumberMinimum: 'greater_than_equal',
  NumberMaximum: 'less_than_equal',
  IntegerMinimum: 'greater_than_equal',
  IntegerMaximum: 'less_than_equal',
  Object: 'object_type',
  Union: 'enum',
  Kind: 'enum',
  Literal: 'literal_error',
};

// TypeBox's ValueErrorType enum by number: Elysia's errors carry only the number.
const VALUE_ERROR_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(ValueErrorType)
    .filter(([, v]) => typeof v === 'number')
    .map(([k, v]) => [v as number, k]),
);

function typeName(errorType: number): string {
  const raw = VALUE_ERROR_NAMES[errorType] ?? 'value_error';
  return TYPE_NAMES[raw] ?? raw.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase();
}

/** Turn Elysia's validation error into the 422 list, one problem per field. */
export function fieldProblems(error: ValidationError): FieldProblem[] {
  const where = error.type === 'body' ? 'body' : error.type;
  const seen = new Set<string>();
  const problems: FieldProblem[] = [];
  for (const e of error.all) {
    const path = 'path' in e && typeof e.path === 'string' ? e.path : '';
    const loc = [where, ...path.split('/').filter(Boolean)];
    const key = loc.join('.');
    if (seen.has(key)) continue; // a union reports every branch; the first says enough
    seen.add(key);
    const schema = ('schema' in e ? e.schema : undefined) as { error?: unknown; description?: string } | undefined;
    const custom = typeof schema?.error === 'string' ? schema.error : undefined;
    const absent = 'value' in e && e.value === undefined;
    const value = 'value' in e ? e.value : undefined;
    const bound = custom || absent ? undefined : numberOutOfBounds(schema, value);
    if (bound) {
      problems.push({ loc, ...bound });
      continue;
    }
    const type = absent ? 'missing' : 'type' in e && typeof e.type === 'number' ? typeName(e.type) : 'value_error';
    const msg =
      custom ??
      (type === 'missing'
        ? 'Field required'
        : ('summary' in e && typeof e.summary === 'string' && e.summary) ||
          ('message' in e ? String(e.message) : 'Invalid value'));
    problems.push({ loc, msg, type });
  }
  return problems.length ? problems : [{ loc: [where], msg: 'Invalid request', type: 'value_error' }];
}

type Bounded = { type?: string; minimum?: number; maximum?: number; anyOf?: Bounded[] };

/**
 * Elysia's t.Integer and t.Numeric take a number or a numeric string (a union), so a number out
 * of range failed as "should be one of: 'integer', 'integer'": say which bound it broke, as for
 * a plain number.
 */
function numberOutOfBounds(schema: unknown, value: unknown): { msg: string; type: string } | undefined {
  const branch = (schema as Bounded | undefined)?.anyOf?.find((s) => s.type === 'integer' || s.type === 'number');
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (!branch || typeof number !== 'number' || !Number.isFinite(number)) return undefined;
  if (branch.type === 'integer' && !Number.isInteger(number)) return { msg: 'Expected an integer', type: 'int_type' };
  if (branch.maximum !== undefined && number > branch.maximum)
    return { msg: `Expected a number less than or equal to ${branch.maximum}`, type: 'less_than_equal' };
  if (branch.minimum !== undefined && number < branch.minimum)
    return { msg: `Expected a number greater than or equal to ${branch.minimum}`, type: 'greater_than_equal' };
  return undefined;
}

function json(
  status: number,
  body: unknown,
  requestId: string | undefined,
  extra: Record<string, string> = {},
): Response {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...extra };
  if (requestId) headers['x-request-id'] = requestId;
  return new Response(JSON.stringify(body), { status, headers });
}

/**
 * Request ids, the error shape, and 405 for a known path with the wrong method.
 * `allowedMethods` answers which methods a path has, so unknown routes can tell 404 from 405.
 */
export function httpErrors(allowedMethods: (path: string) => string[]) {
  return new Elysia({ name: 'likeness/http-errors' })
    .derive({ as: 'global' }, ({ request, set }) => {
      const requestId = request.headers.get('x-request-id')?.slice(0, 100) || newId('req');
      set.headers['x-request-id'] = requestId;
      return { requestId };
    })
    .onError({ as: 'global' }, ({ code, error, request, set }) => {
      const requestId = (set.headers['x-request-id'] as string | undefined) ?? newId('req');
      const response = errorResponse(code, error, request, requestId, allowedMethods);
      // Told to the hooks after the response too (the request metrics count by status).
      set.status = response.status;
      return response;
    });
}

function errorResponse(
  code: string | number,
  error: unknown,
  request: Request,
  requestId: string,
  allowedMethods: (path: string) => string[],
): Response {
  if (error instanceof ApiError) return json(error.status, { detail: error.detail }, requestId, error.headers);
  // A parser's own ApiError (e.g. a duplicate form field) arrives wrapped in Elysia's ParseError.
  const cause = (error as Error | undefined)?.cause;
  if (code === 'PARSE' && cause instanceof ApiError) return json(cause.status, { detail: cause.detail }, requestId);
  if (code === 'VALIDATION') return json(422, { detail: fieldProblems(error as ValidationError) }, requestId);
  if (code === 'PARSE') {
    return json(
      422,
      {
        detail: [
          {
            loc: ['body'],
            msg: 'The request body could not be parsed; check its Content-Type',
            type: 'body_malformed',
          },
        ],
      },
      requestId,
    );
  }
  if (code === 'NOT_FOUND') {
    const path = new URL(request.url).pathname;
    const allowed = allowedMethods(path);
    if (allowed.length && !allowed.includes(request.method)) {
      const response = json(405, { detail: `Method ${request.method} not allowed` }, requestId);
      response.headers.set('allow', allowed.join(', '));
      return response;
    }
    return json(404, { detail: 'Not found' }, requestId);
  }
  log.error(
    { err: error, request_id: requestId, method: request.method, path: new URL(request.url).pathname },
    'request failed',
  );
  return json(500, { detail: 'Internal server error; retry shortly' }, requestId);
}
