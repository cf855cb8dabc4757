// Every route of the API walked with odd bytes (test/http/odd-bytes.test.ts): the routes of
// /openapi.json and the console's and admin API's own, a valid body for each, and one probe per
// place an odd string can go (a path or query parameter, a body field, a field name).
import { connect } from 'node:net';
import { portrait } from './forms.ts';

/**
 * Spelled as each place carries them: NUL, and a lone surrogate where it can travel at all. In a
 * URL it cannot (its UTF-8 form is not UTF-8: decoders leave it as sent, or make it U+FFFD), nor
 * in a form (FormData sends it as U+FFFD).
 */
const ODD = { url: ['%00'], json: ['\u0000', '\ud800'], form: ['\u0000'] };

export const PASSWORD = 'correct horse battery staple';

type Fields = Record<string, unknown>;
interface Schema {
  type?: string;
  format?: string;
  enum?: unknown[];
  minLength?: number;
  minimum?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
}
export interface DocumentOperation {
  parameters?: { in: string; name: string }[];
  requestBody?: { content?: Record<string, { schema?: Schema; example?: Fields }> };
}

/** A route as the sweep sends to it: `{name}` for path parameters, a valid body to spoil one field of at a time. */
export interface Route {
  method: string;
  path: string;
  query: string[];
  body?: { kind: 'json' | 'form'; valid: Fields; text: string[] };
}

/** A value the field's schema takes, for the fields a valid body needs. */
async function validValue(schema: Schema): Promise<unknown> {
  if (schema.format === 'binary') return portrait();
  if (schema.enum) return schema.enum[0];
  if (schema.type === 'string')
    return schema.format === 'uri' ? 'https://hooks.example.com/likeness' : 'Ada'.padEnd(schema.minLength ?? 0, 'a');
  if (schema.type === 'integer' || schema.type === 'number') return schema.minimum ?? 1;
  if (schema.type === 'boolean') return true;
  if (schema.type === 'array' && schema.items) return [await validValue(schema.items)];
  return {};
}

const isText = (schema: Schema): boolean =>
  (schema.type === 'string' && schema.format !== 'binary') ||
  (schema.type === 'array' && !!schema.items && isText(schema.items));

export async function routesOf(document: {
  paths: Record<string, Record<string, DocumentOperation>>;
}): Promise<Route[]> {
  const routes: Route[] = [];
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const content = operation.requestBody?.content ?? {};
      const kind = content['application/json'] ? 'json' : content['multipart/form-data'] ? 'form' : undefined;
      const media = content['application/json'] ?? content['multipart/form-data'];
      let body: Route['body'];
      if (kind && media?.schema) {
        const properties = media.schema.properties ?? {};
        const valid: Fields = media.example ? { ...media.example } : {};
        for (const name of media.schema.required ?? []) valid[name] ??= await validValue(properties[name]!);
        body = { kind, valid, text: Object.keys(properties).filter((name) => isText(properties[name]!)) };
      }
      const query = (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
      routes.push({ method: method.toUpperCase(), path, query, body });
    }
  }
  return routes;
}

/** A valid value with the odd character inside (a valid-looking email or id still reaches a query). */
const spoiled = (value: unknown, odd: string): unknown =>
  Array.isArray(value)
    ? [spoiled(value[0], odd)]
    : typeof value === 'string' && value
      ? `${value[0]}${odd}${value.slice(1)}`
      : `A${odd}da`;

export interface Probe {
  method: string;
  path: string;
  kind?: 'json' | 'form';
  fields?: Fields;
}

/** Every request of the sweep for one route: one odd value per request, everything else valid. */
export function probesOf(route: Route, ids: Record<string, string>): Probe[] {
  const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
  const pathWith = (odd?: { param: string; value: string }) =>
    route.path.replace(/\{(\w+)\}/g, (_, param: string) =>
      param === odd?.param ? odd.value : (ids[param] ?? `${param}_unknown`),
    );
  const valid = route.body && { kind: route.body.kind, fields: route.body.valid };
  const probes: Probe[] = [];
  for (const odd of ODD.url) {
    for (const param of params)
      probes.push({ method: route.method, path: pathWith({ param, value: `x${odd}y` }), ...valid });
    // `probe` is in no route's schema: every query is checked.
    for (const name of [...route.query, 'probe'])
      probes.push({ method: route.method, path: `${pathWith()}?${name}=x${odd}y`, ...valid });
  }
  if (route.body) {
    const { kind, valid: fields, text } = route.body;
    for (const odd of kind === 'json' ? ODD.json : ODD.form) {
      for (const name of text)
        probes.push({
          method: route.method,
          path: pathWith(),
          kind,
          fields: { ...fields, [name]: spoiled(fields[name], odd) },
        });
      // Bun's form parser cuts a field's name at a NUL: only JSON can bring one in a name.
      if (kind === 'json')
        probes.push({ method: route.method, path: pathWith(), kind, fields: { ...fields, [`x${odd}y`]: 'Ada' } });
    }
  }
  return probes;
}

export function encoded(probe: Probe): { body?: BodyInit; headers: Record<string, string> } {
  if (!probe.fields) return { headers: {} };
  if (probe.kind === 'json')
    return { body: JSON.stringify(probe.fields), headers: { 'content-type': 'application/json' } };
  const form = new FormData();
  for (const [name, value] of Object.entries(probe.fields)) form.append(name, value as string | Blob);
  return { body: form, headers: {} };
}

export const described = (probe: Probe) =>
  `${probe.method} ${probe.path}${probe.fields ? ` ${JSON.stringify(probe.fields, (_, v) => (v instanceof Blob ? '<file>' : v))}` : ''}`;

/** The console's own routes, hidden from the document (its twins of /v1 are swept from it). */
export const consoleRoutes = (email: string): Route[] => [
  {
    method: 'POST',
    path: '/console/api/sign-up',
    query: [],
    body: { kind: 'json', valid: { email: 'newcomer@example.com', password: PASSWORD }, text: ['email', 'password'] },
  },
  {
    method: 'POST',
    path: '/console/api/sign-in',
    query: [],
    body: { kind: 'json', valid: { email, password: PASSWORD }, text: ['email', 'password'] },
  },
  { method: 'GET', path: '/console/api/me', query: [] },
  { method: 'GET', path: '/console/api/signed-in', query: [] },
  { method: 'GET', path: '/console/api/keys', query: [] },
  {
    method: 'POST',
    path: '/console/api/keys',
    query: [],
    body: { kind: 'json', valid: { name: 'laptop' }, text: ['name'] },
  },
  {
    method: 'PATCH',
    path: '/console/api/keys/{key_id}',
    query: [],
    body: { kind: 'json', valid: { name: 'laptop' }, text: ['name'] },
  },
  // Last: taken, it would sign the console out.
  {
    method: 'POST',
    path: '/console/api/password',
    query: [],
    body: {
      kind: 'json',
      valid: { current_password: PASSWORD, new_password: PASSWORD },
      text: ['current_password', 'new_password'],
    },
  },
];
/** The admin API's (the operator CLI's way in) and the agent jobs' reports, hidden too. */
export const adminRoutes = (accountId: string): Route[] => {
  const json = (valid: Fields): Route['body'] => ({
    kind: 'json',
    valid,
    text: Object.keys(valid).filter((k) => typeof valid[k] === 'string'),
  });
  return [
    {
      method: 'POST',
      path: '/internal/admin/accounts',
      query: [],
      body: json({ email: 'operator-made@example.com', credits: 10 }),
    },
    { method: 'POST', path: '/internal/admin/keys', query: [], body: json({ account_id: accountId, name: 'ci' }) },
    { method: 'GET', path: '/internal/admin/keys', query: ['account_id'] },
    {
      method: 'POST',
      path: '/internal/admin/keys/revoke',
      query: [],
      body: json({ account_id: accountId, key_id: 'key_unknown' }),
    },
    {
      method: 'POST',
      path: '/internal/admin/credits/grant',
      query: [],
      body: json({ account_id: accountId, amount: 1 }),
    },
    { method: 'GET', path: '/internal/admin/credits/balance', query: ['account_id'] },
    { method: 'POST', path: '/internal/admin/limits', query: [], body: json({ account_id: accountId, limits: {} }) },
    { method: 'GET', path: '/internal/admin/limits', query: ['account_id'] },
    {
      method: 'POST',
      path: '/internal/sessions/{session_id}/reports',
      query: [],
      body: json({ type: 'agent_joined' }),
    },
  ];
};

/** Deletes last: a probe the service took by mistake must not remove what the others need. */
export const deletesLast = (routes: Route[]) => [
  ...routes.filter((r) => r.method !== 'DELETE'),
  ...routes.filter((r) => r.method === 'DELETE'),
];

/** One raw HTTP/1.1 request: headers with bytes fetch refuses to send. */
export function rawRequest(url: string, head: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () =>
      socket.write(Buffer.from(`${head}Host: ${hostname}\r\nConnection: close\r\n\r\n`, 'latin1')),
    );
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}
