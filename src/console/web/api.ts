// The console's only way to the server: same-origin fetch with the session cookie, the CSRF
// header on every change, and errors turned into sentences a person can act on.

// Types only: erased from the bundle, they keep the page in step with the server's shapes.
import type { FieldProblem } from '../../http/errors.ts';
import { problemSentence } from './problems.ts';

export type { FieldProblem };

/** A failed request: `message` is ready to show; `problems` are the 422 field problems. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly problems: FieldProblem[] = [],
    /** From a 429's Retry-After header. */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
  }
}

/** Kept in memory only: it comes back with every sign-in and GET /me. */
let csrfToken: string | null = null;
let unauthorizedHandler: (() => void) | null = null;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called when a signed-in request answers 401 (the cookie expired or was revoked). */
export function onUnauthorized(handler: () => void): void {
  unauthorizedHandler = handler;
}

interface RequestOptions {
  /** Sign-in and sign-up expect 401 and handle it themselves. */
  expectUnauthorized?: boolean;
}

const CHANGES = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

async function request<T>(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (CHANGES.has(method) && csrfToken) headers['X-CSRF-Token'] = csrfToken;
  let payload: BodyInit | undefined;
  if (body instanceof FormData) {
    payload = body; // the browser sets the multipart boundary itself
  } else if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    payload = JSON.stringify(body);
  }

  let response: Response;
  try {
    response = await fetch(path, { method, headers, body: payload, credentials: 'same-origin' });
  } catch {
    throw new ApiError(0, 'Could not reach the server. Check your connection and try again.');
  }

  if (response.status === 401 && !options.expectUnauthorized) unauthorizedHandler?.();
  if (!response.ok) throw await errorOf(response);
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

async function errorOf(response: Response): Promise<ApiError> {
  let detail: unknown;
  try {
    detail = ((await response.json()) as { detail?: unknown }).detail;
  } catch {
    detail = undefined;
  }
  if (Array.isArray(detail)) {
    const problems = detail as FieldProblem[];
    const message = [...new Set(problems.map(problemSentence))].join(' ') || 'Some fields are not valid.';
    return new ApiError(response.status, message, problems);
  }
  let message = typeof detail === 'string' && detail ? detail : fallbackMessage(response.status);
  const retryAfter = Number(response.headers.get('Retry-After'));
  const retryAfterSeconds = response.status === 429 && retryAfter > 0 ? retryAfter : null;
  if (retryAfterSeconds) message += ` ${tryAgainIn(retryAfterSeconds)}`;
  return new ApiError(response.status, message, [], retryAfterSeconds);
}

export function tryAgainIn(seconds: number): string {
  return seconds >= 120
    ? `Try again in ${Math.ceil(seconds / 60)} minutes.`
    : `Try again in ${seconds} second${seconds === 1 ? '' : 's'}.`;
}

function fallbackMessage(status: number): string {
  switch (status) {
    case 401:
      return 'You are signed out. Sign in again.';
    case 402:
      return 'Not enough credits for this.';
    case 403:
      return 'The request was refused. Reload the page and try again.';
    case 404:
      return 'Not found. It may have been deleted.';
    case 429:
      return 'Too many attempts.';
    default:
      return status >= 500
        ? `The server had a problem (${status}). Try again shortly.`
        : `The request failed (${status}).`;
  }
}

export const api = {
  get: <T>(path: string, options?: RequestOptions) => request<T>('GET', path, undefined, options),
  post: <T>(path: string, body?: unknown, options?: RequestOptions) => request<T>('POST', path, body, options),
  patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, body),
  put: <T>(path: string, body: unknown) => request<T>('PUT', path, body),
  delete: (path: string) => request<void>('DELETE', path),
};
