// A session's job asks the control plane to call a webhook tool (issue 33 point 1;
// docs/api.md#tools-calls), on both engines: the receiver on loopback verifies every call's
// signature with the standardwebhooks package, as a customer's would; arguments that break the
// tool's schema never reach it; a slow receiver is a timeout, a redirect is not followed, a big
// answer is cut at 64 KB; a tool not in the session, or deleted since, is an error the model can
// say; a wrong token is 401; a private address is refused at call time once the operator's
// allowance is gone.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Webhook } from 'standardwebhooks';
import type { ToolCallAnswer } from '../../src/contract/agent-tools.ts';
import { runningJobSession } from '../support/job-session.ts';
import { ENGINES, startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { json } from '../support/webhooks.ts';

interface Received {
  path: string;
  body: Record<string, unknown>;
  /** Webhook.verify passed with the secret of the tool the body names. */
  verified: boolean;
}

/** A customer's tool server: every POST verified and recorded; each path answers its own way. */
class ToolReceiver {
  readonly received: Received[] = [];
  /** Each tool's secret by its name, as the customer kept them from the create answers. */
  readonly secrets = new Map<string, string>();
  readonly server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 30,
    fetch: async (request) => {
      const path = new URL(request.url).pathname;
      const raw = await request.text();
      const body = JSON.parse(raw) as Record<string, unknown>;
      let verified = false;
      try {
        const secret = this.secrets.get(String(body.tool)) ?? 'whsec_AAAA';
        new Webhook(secret).verify(raw, request.headers.toJSON());
        verified = true;
      } catch {}
      this.received.push({ path, body, verified });
      if (path === '/weather') return Response.json({ forecast: 'sunny', asked: body.arguments });
      if (path === '/slow') {
        await Bun.sleep(1_500);
        return new Response('too late');
      }
      if (path === '/redirect') return new Response(null, { status: 302, headers: { location: '/weather' } });
      if (path === '/big') return new Response('x'.repeat(100 * 1024));
      if (path === '/broken') return new Response('the CRM is down', { status: 503 });
      return new Response('no such tool', { status: 404 });
    },
  });
  url = (path: string) => `http://127.0.0.1:${this.server.port}${path}`;
  at = (path: string) => this.received.filter((r) => r.path === path);
}

const WEATHER = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 1 },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
  },
  required: ['city'],
  additionalProperties: false,
};

describe.each(ENGINES)('webhook tool calls on %s', (engine) => {
  let service: TestService;
  let account: TestAccount;
  let receiver: ToolReceiver;
  const toolIds = new Map<string, string>();

  beforeAll(async () => {
    receiver = new ToolReceiver();
    // The receiver is on loopback.
    service = await startTestService(engine, { env: { WEBHOOKS_ALLOW_PRIVATE: 'true' } });
    account = await service.account();
    for (const [name, path, timeout_ms] of [
      ['get_weather', '/weather', 2_000],
      ['slow_lookup', '/slow', 300],
      ['moved', '/redirect', 2_000],
      ['big_answer', '/big', 2_000],
      ['broken_crm', '/broken', 2_000],
    ] as const) {
      const answer = await account.call(
        'POST',
        '/v1/tools',
        json({ name, type: 'webhook', description: name, url: receiver.url(path), timeout_ms, parameters: WEATHER }),
      );
      expect(answer.status).toBe(201);
      const tool = (await answer.json()) as { tool_id: string; secret: string };
      receiver.secrets.set(name, tool.secret);
      toolIds.set(name, tool.tool_id);
    }
    const client = await account.call(
      'POST',
      '/v1/tools',
      json({ name: 'show_map', type: 'client', description: 'd' }),
    );
    toolIds.set('show_map', ((await client.json()) as { tool_id: string }).tool_id);
  });
  afterAll(async () => {
    await service?.stop();
    receiver?.server.stop(true);
  });

  /** A running session of the account with these tools and the report token its job would hold. */
  async function sessionWith(names: string[]) {
    const { id, token } = await runningJobSession(service, account.accountId, {
      toolIds: names.map((name) => toolIds.get(name)!),
    });
    const call = (tool: string, args: Record<string, unknown>, bearer = token) =>
      fetch(`${service.url}/internal/sessions/${id}/tool-calls`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          call_id: `call_${crypto.randomUUID()}`,
          tool_id: toolIds.get(tool) ?? tool,
          arguments: args,
        }),
      });
    const answerOf = async (tool: string, args: Record<string, unknown>) => {
      const answer = await call(tool, args);
      expect(answer.status).toBe(200);
      return (await answer.json()) as ToolCallAnswer;
    };
    return { id, token, call, answerOf };
  }

  test('a call reaches the receiver signed, with the session, the call and the arguments; its answer is the result', async () => {
    const session = await sessionWith(['get_weather']);
    const before = receiver.at('/weather').length;
    const response = await session.call('get_weather', { city: 'Lyon', unit: 'celsius' });
    expect(response.status).toBe(200);
    const answer = (await response.json()) as ToolCallAnswer;
    expect(answer.outcome).toBe('ok');
    expect(JSON.parse(answer.result)).toEqual({ forecast: 'sunny', asked: { city: 'Lyon', unit: 'celsius' } });
    expect(answer.duration_ms).toBeGreaterThanOrEqual(0);
    const [received] = receiver.at('/weather').slice(before);
    expect(received!.verified).toBe(true);
    expect(received!.body).toMatchObject({
      session_id: session.id,
      identity_id: null,
      tool: 'get_weather',
      arguments: { city: 'Lyon', unit: 'celsius' },
    });
    expect(received!.body.call_id).toMatch(/^call_/);
  });

  test('arguments that break the schema never reach the receiver; the result says what to fix', async () => {
    const session = await sessionWith(['get_weather']);
    const before = receiver.received.length;
    const missing = await session.answerOf('get_weather', { unit: 'kelvin', extra: 1 });
    expect(missing.outcome).toBe('invalid_arguments');
    expect(missing.result).toContain('city is required');
    expect(missing.result).toContain('unit must be one of "celsius", "fahrenheit"');
    expect(missing.result).toContain('extra is not a parameter of this tool');
    const wrongType = await session.answerOf('get_weather', { city: 42 });
    expect(wrongType.outcome).toBe('invalid_arguments');
    expect(wrongType.result).toContain('city must be string');
    expect(receiver.received.length).toBe(before);
  });

  test('a slow receiver is a timeout; a redirect is not followed; a non-2xx is an error with its excerpt', async () => {
    const session = await sessionWith(['slow_lookup', 'moved', 'broken_crm']);
    const slow = await session.answerOf('slow_lookup', { city: 'Oslo' });
    expect(slow).toMatchObject({ outcome: 'timeout', result: 'the tool did not answer within 300 ms' });
    expect(slow.duration_ms).toBeGreaterThanOrEqual(300);
    expect(slow.duration_ms).toBeLessThan(1_400);

    const before = receiver.at('/weather').length;
    const moved = await session.answerOf('moved', { city: 'Oslo' });
    expect(moved.outcome).toBe('error');
    expect(moved.result).toStartWith('the tool answered 302');
    await Bun.sleep(100);
    expect(receiver.at('/weather').length).toBe(before);

    const broken = await session.answerOf('broken_crm', { city: 'Oslo' });
    expect(broken).toMatchObject({ outcome: 'error', result: 'the tool answered 503: the CRM is down' });
  });

  test('a 100 KB answer is cut at 64 KB, and the result says so', async () => {
    const session = await sessionWith(['big_answer']);
    const big = await session.answerOf('big_answer', { city: 'Oslo' });
    expect(big.outcome).toBe('ok');
    const [kept, note] = big.result.split('\n');
    expect(kept).toBe('x'.repeat(64 * 1024));
    expect(note).toBe('[the answer was cut: only its first 65536 bytes were read]');
  });

  test('a tool not in the session, or deleted since it started, is an error the model can say', async () => {
    const session = await sessionWith(['get_weather', 'broken_crm']);
    const before = receiver.received.length;
    const notInSession = await session.answerOf('big_answer', { city: 'Oslo' });
    expect(notInSession.outcome).toBe('error');
    expect(notInSession.result).toContain('no longer available');
    expect((await session.answerOf('tool_unknown', { city: 'Oslo' })).outcome).toBe('error');

    // A tool made for this test, deleted while the session runs.
    const made = await account.call(
      'POST',
      '/v1/tools',
      json({ name: 'soon_gone', type: 'webhook', description: 'd', url: receiver.url('/weather') }),
    );
    const { tool_id: goneId, secret } = (await made.json()) as { tool_id: string; secret: string };
    toolIds.set('soon_gone', goneId);
    receiver.secrets.set('soon_gone', secret);
    const later = await sessionWith(['soon_gone']);
    expect((await later.answerOf('soon_gone', {})).outcome).toBe('ok');
    expect((await account.call('DELETE', `/v1/tools/${goneId}`)).status).toBe(204);
    const gone = await later.answerOf('soon_gone', {});
    expect(gone.outcome).toBe('error');
    expect(gone.result).toContain('no longer available');
    expect(receiver.received.length).toBe(before + 1);
  });

  test('a client tool is not called here: 422; a wrong token or another session: 401', async () => {
    const session = await sessionWith(['show_map', 'get_weather']);
    const other = await sessionWith(['get_weather']);
    const client = await session.call('show_map', {});
    expect(client.status).toBe(422);
    expect(((await client.json()) as { detail: { type: string }[] }).detail[0]!.type).toBe('not_a_webhook_tool');
    const before = receiver.received.length;
    expect((await session.call('get_weather', { city: 'Oslo' }, 'rpt_wrong')).status).toBe(401);
    expect((await session.call('get_weather', { city: 'Oslo' }, other.token)).status).toBe(401);
    expect((await session.call('get_weather', { city: 'Oslo' }, '')).status).toBe(401);
    expect(receiver.received.length).toBe(before);
  });

  test('a private address is refused at call time once private destinations are not allowed', async () => {
    const session = await sessionWith(['get_weather']);
    const before = receiver.received.length;
    // The operator's setting, as the routes read it (the service's own config object).
    service.config.webhooks.allowPrivate = false;
    try {
      const refused = await session.answerOf('get_weather', { city: 'Oslo' });
      expect(refused.outcome).toBe('error');
      expect(refused.result).toContain("the tool's address was refused: 127.0.0.1 is not a public address");
    } finally {
      service.config.webhooks.allowPrivate = true;
    }
    expect(receiver.received.length).toBe(before);
    expect((await session.answerOf('get_weather', { city: 'Oslo' })).outcome).toBe('ok');
  });

  test('every call that reached the receiver was signed with its tool’s secret', () => {
    expect(receiver.received.length).toBeGreaterThan(5);
    expect(receiver.received.filter((r) => !r.verified)).toEqual([]);
  });
});
