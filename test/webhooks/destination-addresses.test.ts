// IPv6 forms that carry an IPv4 address (IPv4-compatible, IPv4-mapped, NAT64 and its local-use
// prefix, 6to4, Teredo) are judged by the IPv4 inside: each with a private and a public one,
// directly and through the API, as a literal and as what a name resolves to. Before, the address
// library counted `::/96` as plain unicast, so `http://[::127.0.0.1]/` was saved.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import ipaddr from 'ipaddr.js';
import { ipv4Inside, isPublicAddress } from '../../src/webhooks/destinations.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { addWebhook, json } from '../support/webhooks.ts';

// Teredo: 2001:0:<server IPv4>:<flags>:<port>:<client IPv4, every bit inverted>.
const TEREDO_SERVER_PUBLIC = '4136:e378'; // 65.54.227.120
const TEREDO_SERVER_PRIVATE = 'a00:1'; // 10.0.0.1
const TEREDO_CLIENT_PUBLIC = 'f7f7:f7f7'; // 8.8.8.8
const TEREDO_CLIENT_LOOPBACK = '80ff:fffe'; // 127.0.0.1

/** [form, address, the IPv4 addresses inside, public?] */
const FORMS: [string, string, string[], boolean][] = [
  ['IPv4-compatible', '::7f00:1', ['127.0.0.1'], false],
  ['IPv4-compatible', '::a9fe:a9fe', ['169.254.169.254'], false],
  // Deprecated and routed nowhere public: refused whatever it carries.
  ['IPv4-compatible', '::808:808', ['8.8.8.8'], false],
  ['IPv4-mapped', '::ffff:10.1.2.3', ['10.1.2.3'], false],
  ['IPv4-mapped', '::ffff:a9fe:a9fe', ['169.254.169.254'], false],
  ['IPv4-mapped', '::ffff:8.8.8.8', ['8.8.8.8'], true],
  ['NAT64', '64:ff9b::7f00:1', ['127.0.0.1'], false],
  ['NAT64', '64:ff9b::a9fe:a9fe', ['169.254.169.254'], false],
  ['NAT64', '64:ff9b::808:808', ['8.8.8.8'], true],
  // Local-use: the translator's prefix length decides where the IPv4 sits; refused whatever it carries.
  ['NAT64 local-use', '64:ff9b:1::a00:1', ['10.0.0.1'], false],
  ['NAT64 local-use', '64:ff9b:1::808:808', ['8.8.8.8'], false],
  ['6to4', '2002:7f00:1::1', ['127.0.0.1'], false],
  ['6to4', '2002:c0a8:1::1', ['192.168.0.1'], false],
  ['6to4', '2002:808:808::1', ['8.8.8.8'], true],
  [
    'Teredo',
    `2001:0:${TEREDO_SERVER_PUBLIC}:8000:63bf:${TEREDO_CLIENT_LOOPBACK}`,
    ['65.54.227.120', '127.0.0.1'],
    false,
  ],
  ['Teredo', `2001:0:${TEREDO_SERVER_PRIVATE}:8000:63bf:${TEREDO_CLIENT_PUBLIC}`, ['10.0.0.1', '8.8.8.8'], false],
  ['Teredo', `2001:0:${TEREDO_SERVER_PUBLIC}:8000:63bf:${TEREDO_CLIENT_PUBLIC}`, ['65.54.227.120', '8.8.8.8'], true],
];

describe('IPv6 addresses that carry an IPv4 address', () => {
  test.each(FORMS)('%s %s carries %p; public: %p', (_form, address, inside, isPublic) => {
    expect(ipv4Inside(ipaddr.IPv6.parse(address))?.addresses.map(String)).toEqual(inside);
    expect(isPublicAddress(address)).toBe(isPublic);
  });

  test('`::` and `::1` stay refused; plain IPv6 is judged by its range, and only 2000::/3 is public', () => {
    for (const address of [
      '::',
      '::1',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      'ff02::1',
      '2001:db8::1',
      '::1:0:0:1',
      '100::1',
    ])
      expect(isPublicAddress(address), address).toBe(false);
    expect(isPublicAddress('2606:4700:4700::1111')).toBe(true);
    expect(ipv4Inside(ipaddr.IPv6.parse('2606:4700:4700::1111'))).toBeUndefined();
  });

  test('`::1.2.3.4` is IPv4-compatible, as URLs and glibc read it (ipaddr.js alone would read it as IPv4-mapped)', () => {
    expect(isPublicAddress('::8.8.8.8')).toBe(false);
    expect(isPublicAddress('::169.254.169.254')).toBe(false);
    expect(isPublicAddress('::ffff:8.8.8.8')).toBe(true);
  });
});

describe('saving an endpoint whose address carries an IPv4 address', () => {
  let service: TestService;
  const names: Record<string, string[]> = {
    'compatible.example.com': ['::a9fe:a9fe'],
    'compatible-dotted.example.com': ['::8.8.8.8'],
    'nat64-private.example.com': ['64:ff9b::a00:5'],
    'nat64-public.example.com': ['64:ff9b::5db8:d822'],
  };
  beforeAll(async () => {
    service = await startTestService('pglite', {
      overrides: {
        webhookResolver: async (host) => {
          const answer = names[host];
          if (!answer) throw new Error(`ENOTFOUND ${host}`);
          return answer;
        },
      },
    });
  });
  afterAll(() => service.stop());

  test('a private IPv4 inside, or a form that cannot reach a public host: 422 url_not_allowed, nothing saved', async () => {
    const account = await service.account();
    const refused = [
      // The two.
      'http://[::127.0.0.1]/',
      'http://[::a9fe:a9fe]/',
      ...FORMS.filter(([, , , isPublic]) => !isPublic).map(([, address]) => `http://[${address}]/hook`),
      'https://compatible.example.com/hook',
      'https://compatible-dotted.example.com/hook',
      'https://nat64-private.example.com/hook',
    ];
    for (const url of refused) {
      const answer = await account.call('POST', '/v1/webhooks', json({ url, events: ['session.ended'] }));
      expect(answer.status, url).toBe(422);
      const [problem] = ((await answer.json()) as { detail: { loc: string[]; msg: string; type: string }[] }).detail;
      expect(problem, url).toMatchObject({ loc: ['body', 'url'], type: 'url_not_allowed' });
    }
    expect(((await (await account.call('GET', '/v1/webhooks')).json()) as { webhooks: unknown[] }).webhooks).toEqual(
      [],
    );
  });

  test('a public IPv4 inside a form that reaches it is saved', async () => {
    const account = await service.account();
    const allowed = [
      ...FORMS.filter(([, , , isPublic]) => isPublic).map(([, address]) => `http://[${address}]/hook`),
      'https://nat64-public.example.com/hook',
    ];
    for (const url of allowed) expect((await addWebhook(account, { url, events: ['session.ended'] })).url).toBe(url);
  });
});
