// Issue 41 point 5, on both engines (its proof asks for both): a thousand and more tools refused (the account's cap, a name
// taken, a schema outside the subset) or replaced (PATCH parameters) through the real routes
// leave the heap flat. Before, every save compiled its schema with one long-lived Ajv, which
// keeps whatever it compiled (its cache and its generated code's scope), and did so before the
// cap and the name were checked: the heap grew by kilobytes per request, for good.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ENGINES, startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { json } from '../support/webhooks.ts';

const MAX_TOOLS = 3;
const ROUNDS = 1_600;
const WARM_UP = 400;
/**
 * What the last rounds may add to the heap. The old code added ~10 KB a round, for good: ~12 MB
 * over these 1,200 (~25 MB over the 2,500 of 3,000 rounds this suite ran before; fewer rounds
 * keep a threefold margin at half the time).
 */
const GROWTH_MAX_BYTES = 4 * 1024 * 1024;

/** A valid schema no earlier round sent: twenty arguments whose names and values carry `i`. */
const schema = (i: number) => ({
  type: 'object',
  properties: Object.fromEntries(
    Array.from({ length: 20 }, (_, k) => [
      `arg_${i}_${k}`,
      { type: 'string', description: `argument ${k} of round ${i}`, enum: ['a', 'b', `c${i}`], maxLength: 64 },
    ]),
  ),
  required: [`arg_${i}_0`],
  additionalProperties: false,
});

const heapAfterGc = () => {
  Bun.gc(true);
  return process.memoryUsage().heapUsed;
};

describe.each(ENGINES)('tool schemas on %s', (engine) => {
  let service: TestService;
  /** At its cap: every create is refused; its tools are replaced by PATCH. */
  let full: TestAccount;
  /** Below its cap, with the name `taken` in use. */
  let roomy: TestAccount;
  const fullToolIds: string[] = [];

  beforeAll(async () => {
    service = await startTestService(engine, { env: { TOOLS_MAX_PER_ACCOUNT: String(MAX_TOOLS) } });
    full = await service.account();
    roomy = await service.account();
    for (let i = 0; i < MAX_TOOLS; i++) {
      const made = await full.call('POST', '/v1/tools', json({ name: `kept_${i}`, type: 'client', description: 'd' }));
      expect(made.status).toBe(201);
      fullToolIds.push(((await made.json()) as { tool_id: string }).tool_id);
    }
    const taken = await roomy.call('POST', '/v1/tools', json({ name: 'taken', type: 'client', description: 'd' }));
    expect(taken.status).toBe(201);
  });
  afterAll(() => service?.stop());

  /** One refused or replaced tool; the answer's status. */
  async function round(i: number): Promise<number> {
    const response = await [
      () =>
        full.call(
          'POST',
          '/v1/tools',
          json({ name: `over_${i}`, type: 'client', description: 'd', parameters: schema(i) }),
        ),
      () =>
        roomy.call(
          'POST',
          '/v1/tools',
          json({ name: 'taken', type: 'client', description: 'd', parameters: schema(i) }),
        ),
      () =>
        roomy.call(
          'POST',
          '/v1/tools',
          json({ name: `bad_${i}`, type: 'client', description: 'd', parameters: { ...schema(i), pattern: 'x' } }),
        ),
      () =>
        full.call(
          'PATCH',
          `/v1/tools/${fullToolIds[i % MAX_TOOLS]}`,
          json({ parameters: schema(i), description: `v${i}` }),
        ),
    ][i % 4]!();
    await response.arrayBuffer();
    return response.status;
  }

  test(`${ROUNDS} refused or replaced tools leave the heap flat`, async () => {
    const statuses = new Map<number, number>();
    const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
    for (let i = 0; i < WARM_UP; i++) count(await round(i));
    const warm = heapAfterGc();
    for (let i = WARM_UP; i < ROUNDS; i++) count(await round(i));
    const grown = heapAfterGc() - warm;
    expect(Object.fromEntries(statuses)).toEqual({ 422: ROUNDS / 2, 409: ROUNDS / 4, 200: ROUNDS / 4 });
    expect(grown).toBeLessThan(GROWTH_MAX_BYTES);
    // The refusals say why: the cap, then the name.
    const over = await full.call('POST', '/v1/tools', json({ name: 'one_more', type: 'client', description: 'd' }));
    expect(((await over.json()) as { detail: { type: string }[] }).detail[0]!.type).toBe('too_many_tools');
  }, 180_000);
});
