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
 * JSON bodies: an empty body means `{}` (a session start may send nothing), bad JSON is a 422,
 * and so is anything but an object (every JSON body here is one; TypeBox would take an array).
 */
export async function parseJson(request: Request): Promise<unknown> {
  const text = await request.text();
  if (!text.trim()) return {};
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

export const bodyParsers = new Elysia({ name: 'likeness/body' }).onParse(
  { as: 'global' },
  ({ request, contentType }) => {
    const type = (contentType ?? '').toLowerCase();
    if (type.startsWith('multipart/form-data')) return parseMultipart(request);
    if (type === '' || type.startsWith('application/json')) return parseJson(request);
    return undefined;
  },
);
