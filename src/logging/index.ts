// The control plane's log (docs/operations.md#logs): pino, one JSON object per line with
// `request_id`, `account_id`, `session_id`, `identity_id` where known, or pino-pretty's
// readable lines for development (LOG_FORMAT). Fields that carry secrets are redacted by
// name wherever they appear, so a careless `log.info({ headers })` still leaks nothing.
import pino, { type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { Config } from '../config.ts';
import type { FinishedRequest } from '../http/finished-requests.ts';

export type LogSettings = Config['log'];

/** Field names whose values are never written, at the top level or one object down. */
const SECRET_FIELDS = ['authorization', 'cookie', 'x-api-key', 'api_key', 'apiKey', 'password', 'token', 'access_token', 'secret', 'admin_token', 'report_token'];
const REDACT = SECRET_FIELDS.flatMap((field) => [`["${field}"]`, `*["${field}"]`]);

function createLogger({ level, format }: LogSettings, destination?: DestinationStream): Logger {
  // Epoch-millisecond `time`, as the agents SDK's lines beside ours have it.
  const options = { level, base: { service: 'likeness' }, redact: { paths: REDACT, censor: '[redacted]' } };
  // pino-pretty as a stream in this thread (no transport worker): Bun runs it as Node does.
  const out = destination ?? (format === 'pretty' ? pretty({ colorize: Boolean(process.stdout.isTTY), sync: true, singleLine: true, ignore: 'pid,hostname,service' }) : pino.destination({ sync: true }));
  return pino(options, out);
}

/**
 * The process's logger. `configureLogging` replaces it at start (an ES module's exported
 * `let` is a live binding: every importer sees the new one).
 */
export let log: Logger = createLogger({ level: (process.env.LOG_LEVEL as LogSettings['level'] | undefined) ?? 'info', format: 'json' });

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
    { request_id: request.requestId, account_id: request.accountId, method: request.method, route: request.route, path: request.path, status: request.status, duration_ms: Math.round(request.seconds * 1000) },
    'request',
  );
}
