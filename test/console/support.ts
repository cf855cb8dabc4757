// A console visitor at the HTTP level: keeps the sign-in cookie and the CSRF token the way the
// browser page does, so the console API can be tested without a browser.
import type { TestService } from '../support/service.ts';

export interface ConsoleAccountBody {
  account: { account_id: string; email: string; balance: number };
  csrf_token: string;
  api_key?: { key_id: string; api_key: string; name: string | null };
}

export class ConsoleClient {
  cookie: string | undefined;
  csrf: string | undefined;
  /** The last Set-Cookie header the service sent. */
  lastSetCookie: string | null = null;

  constructor(readonly service: TestService) {}

  async call(method: string, path: string, init: { json?: unknown; body?: BodyInit; headers?: Record<string, string>; csrf?: string | null } = {}): Promise<Response> {
    const headers: Record<string, string> = { ...init.headers };
    if (this.cookie) headers.cookie = this.cookie;
    const csrf = init.csrf === undefined ? this.csrf : init.csrf;
    if (csrf && method !== 'GET') headers['x-csrf-token'] = csrf;
    let body = init.body;
    if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.json);
    }
    const response = await fetch(`${this.service.url}${path}`, { method, headers, body, redirect: 'manual' });
    const setCookie = response.headers.get('set-cookie');
    if (setCookie) {
      this.lastSetCookie = setCookie;
      const [pair] = setCookie.split(';');
      this.cookie = /=$/.test(pair!) ? undefined : pair;
    }
    return response;
  }

  async signUp(email: string, password = 'correct horse battery'): Promise<ConsoleAccountBody> {
    const response = await this.call('POST', '/console/api/sign-up', { json: { email, password } });
    if (response.status !== 201) throw new Error(`sign-up answered ${response.status}: ${await response.text()}`);
    const body = (await response.json()) as ConsoleAccountBody;
    this.csrf = body.csrf_token;
    return body;
  }

  async signIn(email: string, password: string): Promise<Response> {
    const response = await this.call('POST', '/console/api/sign-in', { json: { email, password } });
    if (response.status === 200) this.csrf = ((await response.clone().json()) as ConsoleAccountBody).csrf_token;
    return response;
  }
}

let counter = 0;
export function uniqueEmail(): string {
  return `console${++counter}-${crypto.randomUUID().slice(0, 8)}@example.com`;
}
