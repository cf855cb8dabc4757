// The control plane's log (README.md#logs): pino, one JSON object per line with
// `request_id`, `account_id`, `session_id`, `identity_id` where known, or pino-pretty's
// readable lines for development (LOG_FORMAT). Fields that carry secrets are redacted by
// name wherever they appear, so a careless `log.info({ headers })` still leaks nothing, and
// errors are written without the values their queries carried (an API key's hash among them).
import pino, { type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { Config } from '../config.ts';
import type { FinishedRequest } from '../http/finished-requests.ts';

export type LogSettings = Config['log'];

/** Field names whose values are never written, at the top level or one object down. */
const SECRET_FIELDS = [
  'authorization',
  'cookie',
  'x-api-key',
  'api_key',
  'apiKey',
  'password',
  'token',
  'access_token',
  'secret',
  'admin_token',
  'report_token',
];
const REDACT = SECRET_FIELDS.flatMap((field) => [`["${field}"]`, `*["${field}"]`]);

/**
 * Fields of database errors that hold a query's values: drizzle's and PGlite's `params`,
 * postgres.js's `parameters` and `args`, PGlite's `queryOptions`.
 */
const QUERY_VALUE_FIELDS = new Set(['params', 'parameters', 'args', 'queryOptions']);

/** Drizzle's message is `Failed query: <sql>\nparams: <values>`: the SQL stays, the values go. */
const PARAMS_IN_MESSAGE = '\nparams: ';

/**
 * A copy of an error (and of its causes) without the values of a failed query. Postgres's own
 * `detail` goes too (it has a `severity`): it quotes the row a constraint refused.
 */
function withoutQueryValues(error: unknown, copies = new Map<object, unknown>()): unknown {
  if (!error || typeof error !== 'object' || typeof (error as { message?: unknown }).message !== 'string') return error;
  if (copies.has(error)) return copies.get(error);
  const original = error as Error & Record<string, unknown>;
  // Same prototype: the serializer names the error by its constructor.
  const copy = Object.create(Object.getPrototypeOf(original)) as Record<string, unknown>;
  copies.set(error, copy);
  for (const key of Object.keys(original)) {
    if (QUERY_VALUE_FIELDS.has(key) || (key === 'detail' && typeof original.severity === 'string')) continue;
    copy[key] = withoutQueryValues(original[key], copies);
  }
  const cut = original.message.indexOf(PARAMS_IN_MESSAGE);
  const message = cut === -1 ? original.message : original.message.slice(0, cut);
  copy.message = message;
  if (typeof original.stack === 'string') copy.stack = original.stack.replace(original.message, message);
  if (original.cause !== undefined) copy.cause = withoutQueryValues(original.cause, copies);
  if (Array.isArray(original.errors)) copy.errors = original.errors.map((inner) => withoutQueryValues(inner, copies));
  return copy;
}

/** pino's error serializer, on the copy. `error` too: an error logged under that name is one as well. */
const serializeError = (error: unknown) => pino.stdSerializers.err(withoutQueryValues(error) as Error);

function createLogger({ level, format }: LogSettings, destination?: DestinationStream): Logger {
  // Epoch-millisecond `time`, as the agents SDK's lines beside ours have it.
  const options = {
    level,
    base: { service: 'likeness' },
    redact: { paths: REDACT, censor: '[redacted]' },
    serializers: { err: serializeError, error: serializeError },
  };
  // pino-pretty as a stream in this thread (no transport worker): Bun runs it as Node does.
  const out =
    destination ??
    (format === 'pretty'
      ? pretty({
          colorize: Boolean(process.stdout.isTTY),
          sync: true,
          singleLine: true,
          ignore: 'pid,hostname,service',
        })
      : pino.destination({ sync: true }));
  return pino(options, out);
}

/**
 * The process's logger. `configureLogging` replaces it at start (an ES module's exported
 * `let` is a live binding: every importer sees the new one).
 */
export let log: Logger = createLogger({
  level: (process.env.LOG_LEVEL as LogSettings['level'] | undefined) ?? 'info',
  format: 'json',
});

export function configureLogging(settings: LogSettings, destination?: DestinationStream): void {
  log = createLogger(settings, destination);
}

export type { Logger };

/** Machines' routine calls, twice a second or at every scrape (a probe's 503 during warm-up too): logged at debug, not info. */
const ROUTINE_PATHS = new Set(['/internal/workers/heartbeat', '/healthz', '/readyz', '/metrics']);

/** The access log: one line per answered request, its path without the query (which may carry a token or a signature). */
export function logRequest(request: FinishedRequest): void {
  const level = ROUTINE_PATHS.has(request.path) ? 'debug' : 'info';
  log[level](
    {
      request_id: request.requestId,
      account_id: request.accountId,
      method: request.method,
      route: request.route,
      path: request.path,
      status: request.status,
      duration_ms: Math.round(request.seconds * 1000),
    },
    'request',
  );
}
