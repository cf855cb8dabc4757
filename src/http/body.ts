// Our own multipart parsing: Elysia's default would JSON-decode any text field that starts
// with `{` or `[` (a prompt can), and would merge duplicate fields silently.
import { Elysia } from 'elysia';
import { ApiError } from './errors.ts';

export type FormBody = Record<string, string | File>;

export async function parseMultipart(request: Request): Promise<FormBody> {
  let form: FormData;
  try {
    form = await request.formData();
  } catch {
    throw new ApiError(422, [
      { loc: ['body'], msg: 'The multipart/form-data body could not be parsed (check the boundary)', type: 'body_malformed' },
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
      [...duplicates].map((key) => ({ loc: ['body', key], msg: `Field "${key}" was sent more than once`, type: 'duplicate_field' })),
    );
  }
  return body;
}

export const multipartParser = new Elysia({ name: 'likeness/multipart' }).onParse({ as: 'global' }, ({ request, contentType }) =>
  contentType.toLowerCase().startsWith('multipart/form-data') ? parseMultipart(request) : undefined,
);
