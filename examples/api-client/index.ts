// A typed client for the Likeness API: openapi-fetch over the types openapi-typescript made
// from /openapi.json (schema.d.ts). Every path, body, query and answer is checked by the
// TypeScript compiler:
//   const likeness = likenessClient({ baseUrl: 'https://likeness.example', apiKey: process.env.LIKENESS_KEY! });
//   const { data, error } = await likeness.POST('/v1/sessions/start', { body: { identity_id } });
import createClient, { type Client } from 'openapi-fetch';
import type { components, operations, paths } from './schema.d.ts';

export type { components, operations, paths };
export type LikenessClient = Client<paths>;

/** Sends `Authorization: Bearer <apiKey>` with every request; keep the key on your server. */
export function likenessClient({
  baseUrl,
  apiKey,
  fetch,
}: {
  baseUrl: string;
  apiKey: string;
  fetch?: typeof globalThis.fetch;
}): LikenessClient {
  return createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${apiKey}` }, fetch });
}
