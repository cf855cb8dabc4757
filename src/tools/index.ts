// Tools (docs/api.md#tools): /v1/tools for API keys and, as twins, the console; and the
// internal route a session's job asks to call a webhook tool through (the job holds no secret).
// STUB: being built.
import { Elysia } from 'elysia';
import type { Audience } from '../auth/index.ts';
import type { ToolSettings, WebhookSettings } from '../config.ts';
import type { Database } from '../db/index.ts';
import type { Resolver } from '../webhooks/destinations.ts';

export interface ToolRouteDeps {
  db: Database;
  settings: ToolSettings;
  /** Webhook tools follow customer webhooks' address rules (WEBHOOKS_ALLOW_PRIVATE). */
  webhooks: WebhookSettings;
  resolve?: Resolver;
}

export function toolRoutes<const Prefix extends string>(_deps: ToolRouteDeps, _audience: Audience<Prefix>) {
  return new Elysia();
}

/** POST /internal/sessions/{id}/tool-calls, behind the job door (src/sessions/job-reports.ts). */
export function toolCallRoutes(_deps: ToolRouteDeps) {
  return new Elysia();
}
