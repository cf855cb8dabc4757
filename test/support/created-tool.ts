// A tool as a customer makes one: POST /v1/tools with a JSON body, answered 201.
import { expect } from 'bun:test';
import type { TestAccount } from './service.ts';

/** The tool `account` made from `body` (201 expected): its id, and a webhook tool's signing secret. */
export async function createTool(
  account: Pick<TestAccount, 'call'>,
  body: Record<string, unknown>,
): Promise<{ tool_id: string; secret?: string }> {
  const answer = await account.call('POST', '/v1/tools', {
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
  expect(answer.status).toBe(201);
  return (await answer.json()) as { tool_id: string; secret?: string };
}
