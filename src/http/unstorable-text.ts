// Text from outside that the database cannot store. Postgres refuses U+0000 in text and jsonb,
// and jsonb refuses a lone surrogate (JSON.stringify writes one as "\ud800"): such a string in a
// query was a 500. So one rule for every string a request brings (path parameters, the query,
// body values and field names): no NUL, and well-formed UTF-16. Other control characters pass:
// Postgres stores them, a prompt may hold tabs and newlines, and the fields where they do not
// belong refuse them themselves (identities/validation.ts).
import { Elysia } from 'elysia';
import { ApiError, type FieldProblem, notFound } from './errors.ts';

const UNSTORABLE_TYPE = 'string_unsafe_character';

const problemAt = (loc: FieldProblem['loc'], what = 'Text'): FieldProblem => ({
  loc,
  msg: `${what} must not contain NUL (U+0000) or an unpaired surrogate`,
  type: UNSTORABLE_TYPE,
});

/** Whether Postgres can store `text` (in text and in jsonb). */
function isStorable(text: string): boolean {
  return text.isWellFormed() && !text.includes('\u0000');
}

/** Files and raw bytes are data, not text: walking a byte array's entries took seconds a megabyte. */
function isBytes(value: object): boolean {
  return value instanceof Blob || value instanceof ArrayBuffer || ArrayBuffer.isView(value);
}

/** A body of many such strings gets this many problems back, not one per string. */
const MAX_PROBLEMS = 20;

/**
 * Where in `value` (its strings and object keys, at any depth; files are skipped) there is text
 * Postgres would refuse. `at` is where `value` sits (`['body']`). Walked without recursion: a
 * parsed JSON body may nest deeper than the call stack.
 */
export function unstorableText(value: unknown, at: FieldProblem['loc']): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const pending: [unknown, FieldProblem['loc']][] = [[value, at]];
  while (pending.length && problems.length < MAX_PROBLEMS) {
    const [item, loc] = pending.pop()!;
    if (typeof item === 'string') {
      if (!isStorable(item)) problems.push(problemAt(loc));
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) pending.push([item[i], [...loc, i]]);
    } else if (item && typeof item === 'object' && !isBytes(item)) {
      for (const [key, child] of Object.entries(item).reverse()) {
        if (isStorable(key)) pending.push([child, [...loc, key]]);
        else problems.push(problemAt([...loc, key], 'A field name'));
      }
    }
  }
  return problems;
}

/** `identity_id` → `Identity`, for the 404 an unknown id gets. */
const resourceOf = (param: string) => param.charAt(0).toUpperCase() + param.slice(1, -'_id'.length).replace(/_/g, ' ');

/** The query as sent, every parameter: a route's schema drops those it does not know, silently. */
function queryProblems(url: string): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const start = url.indexOf('?');
  if (start === -1) return problems;
  for (const [name, value] of new URLSearchParams(url.slice(start + 1))) {
    if (!isStorable(name) || !isStorable(value)) problems.push(problemAt(['query', name]));
  }
  return problems;
}

/**
 * Every route's path parameters, query and body just before its handler runs (after
 * authentication: a caller without credentials still gets 401). Our JSON and multipart parsers
 * check their bodies as they read them (body.ts); this catches the rest, a body Elysia's own
 * parsers read (form-urlencoded, or JSON sent as text/plain to a `parse: 'json'` route) among it.
 * A path id with such a character is unknown (404), as is any id no row holds.
 */
export const refuseUnstorableText = new Elysia({ name: 'likeness/unstorable-text' }).onBeforeHandle(
  { as: 'global' },
  ({ request, params, body }) => {
    for (const [name, value] of Object.entries((params ?? {}) as Record<string, unknown>)) {
      if (typeof value !== 'string' || isStorable(value)) continue;
      if (name.endsWith('_id')) throw notFound(resourceOf(name));
      throw new ApiError(422, [problemAt(['path', name])]);
    }
    const problems = [...queryProblems(request.url), ...unstorableText(body, ['body'])];
    if (problems.length) throw new ApiError(422, problems.slice(0, MAX_PROBLEMS));
  },
);
