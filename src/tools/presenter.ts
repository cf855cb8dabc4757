// A tool as the API shows it (docs/api.md#tools): never its secret, which only the create answers.

import { isTestAccount } from '../accounts/index.ts';
import type { ToolType } from '../contract/agent-tools.ts';
import type { tools } from './schema.ts';

export type ToolRow = typeof tools.$inferSelect;

export function presentTool(row: ToolRow) {
  return {
    tool_id: row.id,
    name: row.name,
    description: row.description,
    type: row.type as ToolType,
    parameters: row.parameters,
    url: row.url,
    timeout_ms: row.timeoutMs,
    test: isTestAccount(row.accountId),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
