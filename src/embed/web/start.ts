// The embed's one call to the service: POST /v1/embed/sessions with the publishable key, from
// the visitor's browser (CORS). A refusal becomes words the component can show as they are:
// the service's own `detail`, and how long to wait when it said (Retry-After).

/** The service's answer to a start (docs/api.md, "Start a session from a browser"). */
export interface EmbedSession {
  session_id: string;
  room_name: string;
  token: string;
  rtc_url: string;
  visual_awareness: boolean;
  test: boolean;
  /** The session is recorded: the element shows its "Recording" mark. */
  record: boolean;
  max_duration_seconds: number;
}

export interface StartRequest {
  /** The service's base URL, without a trailing slash. */
  service: string;
  publishableKey: string;
  identityId: string;
  formFactor?: string | null;
  language?: string | null;
  /** The page's visitor token (POST /v1/visitor-tokens): the session remembers that visitor. */
  visitorToken?: string | null;
  /** The iframe form only: the origin of the page that embeds the frame. */
  embedder?: string | null;
}

export class StartRefused extends Error {
  constructor(
    message: string,
    /** The HTTP status, or 0 when the service could not be reached. */
    readonly status: number,
    /** Seconds to wait before trying again (429, 503), when the service said. */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
  }
}

/** Words for a refusal whose body had no readable detail. */
const FALLBACK: Record<number, string> = {
  401: 'This avatar’s key is not valid.',
  402: 'The avatar is not available right now.',
  403: 'This site may not start this avatar.',
  404: 'This avatar does not exist.',
  409: 'The avatar is not ready yet.',
  429: 'Too many calls right now.',
  503: 'No avatar is free right now.',
};

export async function startSession(request: StartRequest): Promise<EmbedSession> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${request.publishableKey}`,
    'content-type': 'application/json',
  };
  if (request.embedder) headers['x-likeness-embedder'] = request.embedder;
  const body: Record<string, string> = { identity_id: request.identityId };
  if (request.formFactor) body.form_factor = request.formFactor;
  if (request.language) body.language = request.language;
  if (request.visitorToken) body.visitor_token = request.visitorToken;
  let response: Response;
  try {
    response = await fetch(`${request.service}/v1/embed/sessions`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      credentials: 'omit',
      mode: 'cors',
    });
  } catch {
    // A network failure, or a CORS refusal the page may not read.
    throw new StartRefused('The avatar service could not be reached. Check the connection and try again.', 0);
  }
  if (response.ok) return (await response.json()) as EmbedSession;
  let detail: unknown;
  try {
    detail = ((await response.json()) as { detail?: unknown }).detail;
  } catch {
    detail = undefined;
  }
  const wait = Number(response.headers.get('retry-after'));
  // 422 lists field problems: their messages read well enough joined.
  const said = Array.isArray(detail)
    ? detail.map((problem: { msg?: unknown }) => String(problem?.msg ?? '')).join(' ')
    : typeof detail === 'string'
      ? detail
      : '';
  const message = said.trim() || (FALLBACK[response.status] ?? `The call could not start (HTTP ${response.status}).`);
  throw new StartRefused(message, response.status, Number.isFinite(wait) && wait > 0 ? Math.ceil(wait) : null);
}
