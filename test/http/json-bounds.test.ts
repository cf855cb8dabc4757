// JSON bodies are bounded before they are parsed (src/http/body.ts): 32 levels of arrays and
// objects, 4 MiB. Found trying bodies as an attacker would: a free account's 120 KB tool body of
// nested objects held the API's event loop 2.5 s (the walks over the parsed value), 5 MB of `[`
// 0.8 s in the parse, and a 40 MiB body of JSON was read and parsed whole. Route-level: one engine.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { JSON_BODY_MAX_BYTES, JSON_BODY_MAX_DEPTH } from '../../src/http/body.ts';
import { oneEngine, startTestService, type TestAccount, type TestService } from '../support/service.ts';

const json = { 'content-type': 'application/json' };

/** A tool's body whose parameters nest `levels` objects (two JSON levels each). */
const nestedTool = (levels: number) =>
  `{"name":"deep","description":"d","type":"webhook","url":"https://example.com/x","parameters":${'{"type":"object","properties":{"a":'.repeat(levels)}{"type":"string"}${'}}'.repeat(levels)}}`;

describe.each(oneEngine('pglite'))('JSON bodies on %s', (engine) => {
  let service: TestService;
  let account: TestAccount;
  beforeAll(async () => {
    service = await startTestService(engine, {
      env: { SESSION_SWEEP_INTERVAL_SECONDS: '3600', WEBHOOKS_ALLOW_PRIVATE: 'true' },
    });
    account = await service.account();
  });
  afterAll(() => service?.stop());

  /** The answer, and the slowest /healthz asked every 20 ms meanwhile (the service shares this event loop). */
  async function sent(path: string, body: string) {
    let worstHealthMs = 0;
    let done = false;
    const watching = (async () => {
      while (!done) {
        const asked = performance.now();
        await service.call('GET', '/healthz');
        worstHealthMs = Math.max(worstHealthMs, performance.now() - asked);
        await Bun.sleep(20);
      }
    })();
    const answer = await account.call('POST', path, { body, headers: json }).finally(() => {
      done = true;
    });
    await watching;
    return { status: answer.status, body: (await answer.json()) as { detail: unknown }, worstHealthMs };
  }

  test('nesting deeper than 32 levels is refused before it is parsed, and holds nothing', async () => {
    const deep = await sent('/v1/tools', nestedTool(3000));
    expect(deep.status).toBe(422);
    expect(deep.body.detail).toEqual([
      { loc: ['body'], msg: `JSON nests deeper than ${JSON_BODY_MAX_DEPTH} levels`, type: 'json_too_deep' },
    ]);
    expect(deep.worstHealthMs).toBeLessThan(250); // 2.5 s before the bound
    const brackets = await sent('/v1/sessions/start', '['.repeat(4_000_000));
    expect(brackets.status).toBe(422);
    expect((brackets.body.detail as { type: string }[])[0]!.type).toBe('json_too_deep');
    expect(brackets.worstHealthMs).toBeLessThan(250); // 0.6 s in the parse before
  });

  test('what a real body nests passes the bound, and brackets inside strings are text', async () => {
    // 15 objects deep in JSON: the schema's own depth rule answers (5 schemas), not the parser.
    const tooDeepSchema = await sent('/v1/tools', nestedTool(7));
    expect(tooDeepSchema.status).toBe(422);
    expect(JSON.stringify(tooDeepSchema.body.detail)).toContain('schema_too_deep');
    const bracketed = await sent(
      '/v1/tools',
      JSON.stringify({
        name: 'brackets',
        description: `Looks up ${'[{'.repeat(200)} an order`,
        type: 'webhook',
        url: 'http://127.0.0.1:9/orders',
        parameters: { type: 'object', properties: { id: { type: 'string', description: 'The order' } } },
      }),
    );
    expect(bracketed).toMatchObject({ status: 201 });
  });

  test('a JSON body over 4 MiB is 413 before it is read', async () => {
    const padding = 'x'.repeat(JSON_BODY_MAX_BYTES);
    const large = await sent('/v1/visitor-tokens', JSON.stringify({ visitor_id: 'v1', padding }));
    expect(large.status).toBe(413);
    expect(large.body.detail).toBe(`Request body too large: a JSON body is at most ${JSON_BODY_MAX_BYTES} bytes`);
    // Just under it is read (and refused by the schema for what it says, not for its size).
    const under = await sent('/v1/visitor-tokens', JSON.stringify({ visitor_id: 'v1', padding: padding.slice(100) }));
    expect(under.status).not.toBe(413);
  });
});
