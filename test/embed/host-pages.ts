// A customer's website for the embed suites: a second web server, on another origin than the
// service, serving examples/embed as a developer would copy them (the service's address, the
// publishable key and the identity filled in; React from node_modules instead of the CDN,
// since nothing outside this machine is reachable). One server answers on two origins:
// http://localhost:<port> (put on a key's list) and http://127.0.0.1:<port> (left off it);
// both are loopback, so secure contexts with the fake microphone.
import { expect } from 'bun:test';
import { join } from 'node:path';
import { type FormFields, identityForm } from '../support/forms.ts';
import type { TestAccount } from '../support/service.ts';

const EXAMPLES = join(import.meta.dir, '../../examples/embed');
const NODE_MODULES = join(import.meta.dir, '../../node_modules');

export interface HostPages {
  /** The origin a key allows. */
  allowed: string;
  /** The same pages on an origin no key allows. */
  other: string;
  stop(): void;
}

export interface HostPageSettings {
  /** The service's base URL (where embed.js is). */
  service: string;
  key: string;
  identity: string;
}

export function startHostPages(settings: () => HostPageSettings): HostPages {
  const fill = (html: string) => {
    const { service, key, identity } = settings();
    return html
      .replaceAll('http://localhost:8080', service)
      .replaceAll('lk_pub_YOUR_PUBLISHABLE_KEY', key)
      .replaceAll('idn_YOUR_IDENTITY', identity)
      .replaceAll('https://unpkg.com/react@18.3.1/umd/', '/vendor/react/')
      .replaceAll('https://unpkg.com/react-dom@18.3.1/umd/', '/vendor/react-dom/');
  };
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const { pathname } = new URL(request.url);
      const example = /^\/(index|react|iframe)\.html$/.exec(pathname);
      if (example) {
        const html = await Bun.file(join(EXAMPLES, `${example[1]}.html`)).text();
        return new Response(fill(html), { headers: { 'content-type': 'text/html; charset=utf-8' } });
      }
      const vendor = /^\/vendor\/(react|react-dom)\/([\w.-]+\.js)$/.exec(pathname);
      if (vendor) {
        const file = Bun.file(join(NODE_MODULES, vendor[1]!, 'umd', vendor[2]!));
        if (await file.exists()) return new Response(file, { headers: { 'content-type': 'text/javascript' } });
      }
      // The browser asks for one on its own; a 404 would be a console error the suites count.
      if (pathname === '/favicon.ico') return new Response(null, { status: 204 });
      return new Response('not found', { status: 404 });
    },
  });
  return {
    allowed: `http://localhost:${server.port}`,
    other: `http://127.0.0.1:${server.port}`,
    stop: () => void server.stop(true),
  };
}

/** The id of the identity `account` made from identityForm's defaults and `fields` (made, or the suite stops here). */
export async function createdIdentityId(account: TestAccount, fields: FormFields): Promise<string> {
  const created = await account.call('POST', '/v1/identities', { body: await identityForm(fields) });
  expect(created.status).toBe(200);
  return ((await created.json()) as { identity_id: string }).identity_id;
}

/** A publishable key `account` made for the host pages' allowed origin and `identityId`, with `body`'s other fields. */
export async function hostPagesKey(
  account: TestAccount,
  host: HostPages,
  identityId: string,
  body: Record<string, unknown>,
): Promise<string> {
  const response = await account.call('POST', '/v1/publishable-keys', {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ allowed_origins: [host.allowed], identity_ids: [identityId], ...body }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { publishable_key: string }).publishable_key;
}
