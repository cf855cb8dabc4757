// A session's tools and documents (docs/api.md#sessions-start): the identity's, or the start's
// own instead, fixed at the start and shown on the session; what the dispatch tells the job
// (read back from the real LiveKit server, parsed as the job parses it): each tool without its
// URL or secret, the tool-calls URL with a webhook tool, the knowledge URL with documents; and
// a job that takes the session over (the agent watch) gets the same.
import { beforeAll, describe, expect, test } from 'bun:test';
import { eq, sql } from 'drizzle-orm';
import { type ParsedDispatch, parseDispatchMetadata } from '../../src/contract/index.ts';
import { sessions } from '../../src/sessions/schema.ts';
import { tools } from '../../src/tools/schema.ts';
import { countRows, insertDocument, insertTool, WEBHOOK_SECRET, WEBHOOK_URL } from '../identities/attachment-rows.ts';
import type { IdentityBody } from '../support/forms.ts';
import { ENGINES } from '../support/service.ts';
import { createIdentity, postSessionStart } from '../support/session-start.ts';
import { suiteServiceWithAccount } from '../support/suite-service.ts';

interface SessionRead {
  tool_ids: string[];
  document_ids: string[];
}

describe.each(ENGINES)('session tools and documents on %s', (engine) => {
  const suite = suiteServiceWithAccount(engine, {
    livekit: 'local',
    env: { CREDITS_ONBOARDING: '0', SESSION_SWEEP_INTERVAL_SECONDS: '3600' },
  });
  let identity: IdentityBody;
  let webhook: string;
  let client: string;
  let document: string;
  beforeAll(async () => {
    webhook = await insertTool(suite.service, suite.account.accountId, { name: 'check_order', type: 'webhook' });
    client = await insertTool(suite.service, suite.account.accountId, { name: 'show_map', type: 'client' });
    document = await insertDocument(suite.service, suite.account.accountId, 'ready');
    identity = await createIdentity(suite.account, {
      language: 'en',
      tool_ids: JSON.stringify([webhook, client]),
      document_ids: JSON.stringify([document]),
    });
  });

  const start = (body: Record<string, unknown>) => postSessionStart(suite.account, body);

  /** Every dispatch of the room, oldest first, as the job parses each. */
  const dispatches = async (room: string): Promise<(ParsedDispatch & { dispatch_id: string })[]> => {
    const listed = await suite.service.services.livekit.dispatches.listDispatch(room);
    return listed
      .filter((d) => d.agentName === suite.service.config.livekit.agentName)
      .map((d) => {
        const parsed = parseDispatchMetadata(d.metadata);
        if (!parsed.ok) throw new Error(parsed.problem);
        return { ...parsed.metadata, dispatch_id: d.id };
      });
  };
  const readSession = async (id: string) =>
    (await (await suite.account.call('GET', `/v1/sessions/${id}`)).json()) as SessionRead;

  test("the identity's lists: the job gets each tool without URL or secret, and where to call and retrieve", async () => {
    const started = await start({ identity_id: identity.identity_id });
    expect(started.status).toBe(200);
    const { room_name } = (await started.json()) as { room_name: string };
    try {
      const [metadata] = await dispatches(room_name);
      expect(metadata!.tools).toEqual([
        {
          tool_id: webhook,
          name: 'check_order',
          description: 'Looks up an order by its number.',
          type: 'webhook',
          parameters: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
          timeout_ms: 4_000,
        },
        expect.objectContaining({ tool_id: client, name: 'show_map', type: 'client' }),
      ]);
      // The raw metadata too: no URL or secret anywhere in it but the control plane's own.
      const raw = (await suite.service.services.livekit.dispatches.listDispatch(room_name))[0]!.metadata;
      expect(raw).not.toContain(WEBHOOK_SECRET);
      expect(raw).not.toContain(WEBHOOK_URL);
      const base = `${suite.service.config.internalUrl}/internal/sessions/${room_name}`;
      expect(metadata!.tool_calls_url).toBe(`${base}/tool-calls`);
      expect(metadata!.knowledge_url).toBe(`${base}/knowledge`);
      expect(await readSession(room_name)).toMatchObject({ tool_ids: [webhook, client], document_ids: [document] });
    } finally {
      await suite.account.call('POST', `/v1/sessions/${room_name}/end`);
    }
  });

  test("the start's own lists replace the identity's; with no webhook tool and no document, no URLs", async () => {
    const started = await start({ identity_id: identity.identity_id, tool_ids: [client], document_ids: [] });
    expect(started.status).toBe(200);
    const { room_name } = (await started.json()) as { room_name: string };
    try {
      const [metadata] = await dispatches(room_name);
      expect(metadata!.tools!.map((t) => t.tool_id)).toEqual([client]);
      expect(metadata!.tool_calls_url).toBeUndefined();
      expect(metadata!.knowledge_url).toBeUndefined();
      expect(await readSession(room_name)).toMatchObject({ tool_ids: [client], document_ids: [] });
    } finally {
      await suite.account.call('POST', `/v1/sessions/${room_name}/end`);
    }
    // Without an identity: tools still, and nothing by default.
    const bare = (await (await start({ tool_ids: [webhook] })).json()) as { room_name: string };
    const bareDefault = (await (await start({})).json()) as { room_name: string };
    try {
      expect((await dispatches(bare.room_name))[0]!.tools!.map((t) => t.tool_id)).toEqual([webhook]);
      expect(await readSession(bareDefault.room_name)).toMatchObject({ tool_ids: [], document_ids: [] });
      expect((await dispatches(bareDefault.room_name))[0]!.tools).toEqual([]);
    } finally {
      for (const room of [bare.room_name, bareDefault.room_name])
        await suite.account.call('POST', `/v1/sessions/${room}/end`);
    }
  });

  test('a bad list is refused at its entry, before any room or row', async () => {
    const stranger = await suite.service.account();
    const foreignTool = await insertTool(suite.service, stranger.accountId);
    const failed = await insertDocument(suite.service, suite.account.accountId, 'failed');
    const before = await countRows(suite.service, 'sessions');
    const cases: [Record<string, unknown>, (string | number)[]][] = [
      [{ tool_ids: [client, foreignTool] }, ['body', 'tool_ids', 1]],
      [{ tool_ids: [client, client] }, ['body', 'tool_ids', 1]],
      [{ document_ids: [failed] }, ['body', 'document_ids', 0]],
      [{ document_ids: ['doc_nosuchdocument'] }, ['body', 'document_ids', 0]],
      [{ tool_ids: Array.from({ length: 21 }, (_, i) => `tool_${i}`) }, ['body', 'tool_ids']],
      [{ tool_ids: 'tool_abc' }, ['body', 'tool_ids']],
    ];
    for (const [fields, loc] of cases) {
      const response = await start({ identity_id: identity.identity_id, ...fields });
      expect(response.status).toBe(422);
      const { detail } = (await response.json()) as { detail: { loc: unknown[] }[] };
      expect(detail.map((p) => JSON.stringify(p.loc))).toContain(JSON.stringify(loc));
    }
    expect(await countRows(suite.service, 'sessions')).toBe(before);
  });

  test("fixed at the start: the identity's later change is not the session's; a job taking it over gets the same tools", async () => {
    const started = (await (await start({ identity_id: identity.identity_id })).json()) as {
      room_name: string;
      dispatch_id: string;
    };
    const room = started.room_name;
    try {
      // The identity drops its tools and documents after the start.
      const patched = await suite.account.call('PATCH', `/v1/identities/${identity.identity_id}`, {
        body: (() => {
          const f = new FormData();
          f.append('tool_ids', '[]');
          f.append('document_ids', '[]');
          return f;
        })(),
      });
      expect(patched.status).toBe(200);
      expect(await readSession(room)).toMatchObject({ tool_ids: [webhook, client], document_ids: [document] });

      // Its agent joined, then no worker listed it for long: the watch takes it for lost and dispatches again.
      const db = suite.service.services.database.db;
      await db
        .update(sessions)
        .set({ agentJoinedAt: sql`now() - interval '60 seconds'`, agentSeenAt: sql`now() - interval '60 seconds'` })
        .where(eq(sessions.id, room));
      expect(await suite.service.services.agentWatch.tick()).toContain(room);
      const all = await dispatches(room);
      const again = all.find((d) => d.dispatch_id !== started.dispatch_id);
      expect(again).toBeDefined();
      expect(again!.tools).toEqual(all.find((d) => d.dispatch_id === started.dispatch_id)!.tools!);
      expect(again!.tools!.map((t) => t.tool_id)).toEqual([webhook, client]);
      expect(again!.tool_calls_url).toBe(`${suite.service.config.internalUrl}/internal/sessions/${room}/tool-calls`);
      expect(again!.knowledge_url).toBe(`${suite.service.config.internalUrl}/internal/sessions/${room}/knowledge`);

      // A tool deleted since is left out of a later takeover (the job could not call it).
      await db.delete(tools).where(eq(tools.id, webhook));
      await db
        .update(sessions)
        .set({ agentJoinedAt: sql`now() - interval '60 seconds'`, agentSeenAt: sql`now() - interval '60 seconds'` })
        .where(eq(sessions.id, room));
      expect(await suite.service.services.agentWatch.tick()).toContain(room);
      const third = (await dispatches(room)).find(
        (d) => d.dispatch_id !== started.dispatch_id && d.dispatch_id !== again!.dispatch_id,
      );
      expect(third!.tools!.map((t) => t.tool_id)).toEqual([client]);
      expect(third!.tool_calls_url).toBeUndefined();
    } finally {
      await suite.account.call('POST', `/v1/sessions/${room}/end`);
    }
  });
});
