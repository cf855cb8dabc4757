// Issue 41 point 5, on both engines: a name refused as a destination (of a customer webhook or a
// webhook tool) is refused in words that never say what it resolved to, nor whether it resolved
// at all, when saved (422) and when called (a delivery's recorded error, a tool call's result).
// Before, "intranet.example.com resolves to 10.1.2.3, not a public address" let any account read
// the service's internal DNS.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { ToolCallAnswer } from '../../src/contract/agent-tools.ts';
import { systemResolver } from '../../src/webhooks/destinations.ts';
import { runningJobSession } from '../support/job-session.ts';
import { ENGINES, startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { addWebhook, type Delivery, deliveriesOf, json } from '../support/webhooks.ts';

const PUBLIC = '93.184.216.34';
/** Each name's answer now; `nowhere.example.com` does not resolve, `localhost` goes to the system's resolver. */
const names: Record<string, string[]> = {
  'intranet.example.com': ['10.1.2.3'],
  'mixed.example.com': [PUBLIC, '192.168.0.7'],
  'metadata.example.com': ['::ffff:169.254.169.254'],
  'rebind.example.com': [PUBLIC],
};
const NOT_SAID = ['10.1.2.3', '192.168.0.7', '169.254', '127.0.0.1', '::1', '10.9.8.7', 'resolves to', 'ENOTFOUND'];
const refusal = (host: string) =>
  `${host} does not resolve to a public address (a name must resolve only to public ones: not private, loopback, link-local or reserved)`;

describe.each(ENGINES)('refused names on %s', (engine) => {
  let service: TestService;
  let account: TestAccount;

  beforeAll(async () => {
    service = await startTestService(engine, {
      env: { WEBHOOKS_RETRY_SECONDS: '60', WEBHOOKS_POLL_MS: '100' },
      overrides: {
        webhookResolver: async (host) => {
          if (host === 'nowhere.example.com') throw new Error('ENOTFOUND nowhere.example.com');
          return names[host] ?? systemResolver(host);
        },
      },
    });
    account = await service.account();
  });
  afterAll(() => service?.stop());

  const hosts = [
    'intranet.example.com',
    'mixed.example.com',
    'metadata.example.com',
    'localhost',
    'nowhere.example.com',
  ];

  test('saving a webhook or a tool: 422 saying the name is not public, never what it resolved to', async () => {
    for (const host of hosts) {
      const url = `https://${host}/hook`;
      const webhook = await account.call('POST', '/v1/webhooks', json({ url, events: ['session.ended'] }));
      const tool = await account.call(
        'POST',
        '/v1/tools',
        json({ name: 'lookup', type: 'webhook', description: 'd', url }),
      );
      for (const answer of [webhook, tool]) {
        expect(answer.status, host).toBe(422);
        const [problem] = ((await answer.json()) as { detail: { loc: string[]; msg: string; type: string }[] }).detail;
        // A name that does not resolve reads like one that resolves privately: no oracle of which names exist.
        expect(problem, host).toEqual({ loc: ['body', 'url'], msg: `url: ${refusal(host)}`, type: 'url_not_allowed' });
      }
    }
  });

  test("a delivery to a name that turned private records the refusal without the name's address", async () => {
    const endpoint = await addWebhook(account, { url: 'https://rebind.example.com/hook', events: ['session.ended'] });
    names['rebind.example.com'] = ['10.9.8.7'];
    try {
      await account.call('POST', `/v1/webhooks/${endpoint.webhook_id}/test`);
      const deadline = Date.now() + 10_000;
      let deliveries: Delivery[] = [];
      while (!deliveries[0]?.attempts && Date.now() < deadline) {
        await Bun.sleep(50);
        deliveries = await deliveriesOf(account, endpoint.webhook_id);
      }
      const [delivery] = deliveries;
      expect(delivery).toMatchObject({ attempts: 1, last_error: `refused: ${refusal('rebind.example.com')}` });
      for (const secret of NOT_SAID) expect(JSON.stringify(delivery)).not.toContain(secret);
    } finally {
      names['rebind.example.com'] = [PUBLIC];
    }
  });

  test("a tool call to a name that turned private is an error without the name's address", async () => {
    const made = await account.call(
      'POST',
      '/v1/tools',
      json({ name: 'rebound_tool', type: 'webhook', description: 'd', url: 'https://rebind.example.com/tool' }),
    );
    expect(made.status).toBe(201);
    const { tool_id } = (await made.json()) as { tool_id: string };
    const { id, token } = await runningJobSession(service, account.accountId, { toolIds: [tool_id] });
    try {
      for (const answer of [['10.9.8.7'], ['::1'], []]) {
        names['rebind.example.com'] = answer;
        const response = await fetch(`${service.url}/internal/sessions/${id}/tool-calls`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ call_id: `call_${crypto.randomUUID()}`, tool_id, arguments: {} }),
        });
        expect(response.status).toBe(200);
        const called = (await response.json()) as ToolCallAnswer;
        expect(called).toMatchObject({
          outcome: 'error',
          result: `the tool's address was refused: ${refusal('rebind.example.com')}`,
        });
        for (const secret of NOT_SAID) expect(called.result).not.toContain(secret);
      }
    } finally {
      names['rebind.example.com'] = [PUBLIC];
    }
  });
});
