// What the tool routes need (src/server.ts builds it once for /v1/tools, the console's twins and the job's calls).
import type { ToolSettings, WebhookSettings } from '../config.ts';
import type { Database } from '../db/index.ts';
import type { Resolver } from '../webhooks/index.ts';

export interface ToolRouteDeps {
  db: Database;
  settings: ToolSettings;
  /** Webhook tools follow customer webhooks' address rules (WEBHOOKS_ALLOW_PRIVATE). */
  webhooks: WebhookSettings;
  resolve?: Resolver;
}
