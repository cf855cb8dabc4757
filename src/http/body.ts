// Request bodies. Our own multipart parsing: Elysia's default would JSON-decode any text
// field that starts with `{` or `[` (a prompt can), and would merge duplicate fields silently.
// Both parsers refuse text the database cannot store (unstorable-text.ts) as they read it, field
// names included, before a schema drops the fields it does not know.
import { Elysia } from 'elysia';
import { ApiError } from './errors.ts';
import { unstorableText } from './unstorable-text.ts';

function refuseUnstorable(body: unknown): void {
  const problems = unstorableText(body, ['body']);
  if (problems.length) throw new ApiError(422, problems);
}

export type FormBody = Record<string, string | File>;

export async function parseMultipart(request: Request): Promise<FormBody> {
  let form: FormData;
  try {
    form = await request.formData();
  } catch {
    throw new ApiError(422, [
      {
        loc: ['body'],
        msg: 'The multipart/form-data body could not be parsed (check the boundary)',
        type: 'body_malformed',
      },
    ]);
  }
  const body: FormBody = Object.create(null);
  const duplicates = new Set<string>();
  form.forEach((value, key) => {
    if (key in body) duplicates.add(key);
    body[key] = value;
  });
  if (duplicates.size) {
    throw new ApiError(
      422,
      [...duplicates].map((key) => ({
        loc: ['body', key],
        msg: `Field "${key}" was sent more than once`,
        type: 'duplicate_field',
      })),
    );
  }
  refuseUnstorable(body);
  return body;
}

/**
 * The largest JSON body: none of ours needs more than a megabyte (a visitor's 1,000 facts, a
 * 32,000-character context escaped); 40 MiB of JSON held the event loop for seconds in the
 * parse, the text walk and the schema.
 */
export const JSON_BODY_MAX_BYTES = 4 * 1024 * 1024;
/**
 * How deep a JSON body may nest (arrays and objects). Ours nest about a dozen deep (a tool's
 * parameters, 5 schemas deep); 120 KB of nested objects cost 2.5 s of the event loop in the
 * walks over them, and 5 MB of `[` 0.8 s in the parse, before any schema could refuse them.
 */
export const JSON_BODY_MAX_DEPTH = 32;

/** Whether `text` nests arrays and objects deeper than `max` (brackets inside strings skipped). A scan, linear. */
function nestsDeeper(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/**
 * JSON bodies: an empty body means `{}` (a session start may send nothing), bad JSON is a 422,
 * and so is anything but an object (every JSON body here is one; TypeBox would take an array).
 * Bounded in size and depth before it is parsed.
 */
export async function parseJson(request: Request): Promise<unknown> {
  const declared = Number(request.headers.get('content-length'));
  if (declared > JSON_BODY_MAX_BYTES) throw tooLargeJson();
  const text = await request.text();
  if (text.length > JSON_BODY_MAX_BYTES) throw tooLargeJson();
  if (!text.trim()) return {};
  if (nestsDeeper(text, JSON_BODY_MAX_DEPTH)) {
    throw new ApiError(422, [
      { loc: ['body'], msg: `JSON nests deeper than ${JSON_BODY_MAX_DEPTH} levels`, type: 'json_too_deep' },
    ]);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ApiError(422, [
      { loc: ['body'], msg: `Malformed JSON: ${(error as Error).message}`, type: 'json_invalid' },
    ]);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ApiError(422, [{ loc: ['body'], msg: 'The body must be a JSON object', type: 'object_type' }]);
  }
  refuseUnstorable(parsed);
  return parsed;
}

const tooLargeJson = () =>
  new ApiError(413, `Request body too large: a JSON body is at most ${JSON_BODY_MAX_BYTES} bytes`);

export const bodyParsers = new Elysia({ name: 'likeness/body' }).onParse(
  { as: 'global' },
  ({ request, contentType }) => {
    const type = (contentType ?? '').toLowerCase();
    if (type.startsWith('multipart/form-data')) return parseMultipart(request);
    if (type === '' || type.startsWith('application/json')) return parseJson(request);
    return undefined;
  },
);
