// Likeness scaled out (README "Deploy", deploy/compose.yaml) on real engines: two LiveKit nodes
// sharing one Redis, Postgres, the S3 server, two API processes behind a load balancer and two
// agent workers, each a process of its own (topology.ts). Sessions spread over both workers and
// both LiveKit nodes whichever API process starts them; either API process serves any of them;
// a worker killed mid-conversation loses no session; an API process killed loses no work.
// biome-ignore-all lint/style/noExcessiveLinesPerFile: one LiveKit cluster (two nodes on Redis), two API processes and two workers, shared by every test: split, each part would start its own
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { SQL } from 'bun';
import { eq, inArray } from 'drizzle-orm';
import { CHAT_TOPIC } from '../../src/contract/index.ts';
import { type DatabaseHandle, openDatabase } from '../../src/db/index.ts';
import { sessions } from '../../src/sessions/schema.ts';
import { freeAgentSlots } from '../../src/workers/admission.ts';
import { joinWatchingVideo } from '../avatar/support.ts';
import * as fx from '../fixtures/index.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../support/fakes/openai.ts';
import { file, form, type IdentityBody, identityForm } from '../support/forms.ts';
import { toolReceiver } from '../support/tool-receiver.ts';
import { eventually, joinAsVisitor, type StartedSession } from '../support/visitor.ts';
import { type Cluster, startCluster } from './topology.ts';

describe('a cluster of two API processes, two agent workers and two LiveKit nodes', () => {
  const dirs: string[] = [];
  let cluster: Cluster;
  let database: DatabaseHandle;
  let authorization = '';
  let identityId = '';
  /** Two more accounts with an identity each: admission's fair share keeps a slot for accounts that run none. */
  const others: { authorization: string; identityId: string }[] = [];
  /** The workers' language model, at the wire: it calls the appointment tool when asked about one. */
  let openai: FakeOpenAI;
  /** The customer's tool receiver: every call it takes, with its signature checked. */
  const receiver = toolReceiver(() => ({ status: 'confirmed', time: '10:30' }));
  const toolCalls = receiver.calls;

  const call = (base: string, method: string, path: string, body?: unknown, auth = authorization) =>
    fetch(`${base}${path}`, {
      method,
      headers: { authorization: auth, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  const row = async (id: string) => (await database.db.select().from(sessions).where(eq(sessions.id, id)))[0]!;
  async function newAccount(email: string): Promise<string> {
    const created = await fetch(`${cluster.apis[0]!.url}/internal/admin/accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${cluster.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email, credits: 100_000 }),
    });
    return `Bearer ${((await created.json()) as { api_key: string }).api_key}`;
  }

  /**
   * A session started through `base`, retried as a client does when admission answers 429 or
   * 503 (a worker's heartbeat late on a busy machine counts its slots out for a moment).
   */
  async function admitted(base: string, body: Record<string, unknown>, auth = authorization) {
    return eventually(
      async () => {
        const started = await call(base, 'POST', '/v1/sessions/start', body, auth);
        if (started.status === 200) return (await started.json()) as StartedSession;
        const refusal = await started.text();
        console.log(`start through ${base} refused: ${started.status} ${refusal}`);
        expect([429, 503]).toContain(started.status); // anything else is no admission's answer
        return undefined;
      },
      30_000,
      'a session admitted',
    );
  }

  /** A session started through `base`, and a visitor receiving its avatar (through that API's /rtc). */
  async function visit(base: string, account = { authorization, identityId }) {
    const session = await admitted(base, { identity_id: account.identityId }, account.authorization);
    expect(session.rtc_url).toBe(base.replace('http', 'ws'));
    const { visitor, videos } = await joinWatchingVideo(session);
    await eventually(() => (videos[0]?.frames.length ?? 0) > 0, 30_000, 'the avatar');
    return { session, visitor, videos };
  }

  beforeAll(async () => {
    openai = startFakeOpenAI();
    openai.respond((chat) => {
      const asked = chat.userTexts.at(-1) ?? '';
      if (!/appointment/i.test(asked)) return 'Hello, I am here to help.';
      const result = chat.toolResults.at(-1)?.content;
      if (!result) return { toolCalls: [{ name: 'get_appointment', arguments: { date: 'Tuesday' } }] };
      // agents sends a tool's text result to the model as a JSON string.
      const answer = JSON.parse(result) as string | { status: string; time: string };
      const { status, time } =
        typeof answer === 'string' ? (JSON.parse(answer) as { status: string; time: string }) : answer;
      // The passage retrieved for this turn is quoted in the request (a user-role line), or the answer lacks it.
      const parking = chat.userTexts.some((text) => /^From the document .*Calle Mayor 12/.test(text))
        ? ' You can park at Calle Mayor 12, level -2.'
        : '';
      return `Your appointment on Tuesday is ${status} for ${time}.${parking}`;
    });
    cluster = await startCluster(dirs, {
      // The tool's receiver is on this machine; documents are embedded by the offline model (the
      // suites' environment points OPENAI_BASE_URL at the shared fakes, whose vectors are hashes).
      apiEnv: { WEBHOOKS_ALLOW_PRIVATE: 'true', KNOWLEDGE_EMBEDDINGS: 'offline' },
      agentEnv: { OPENAI_API_KEY: 'sk-cluster', OPENAI_BASE_URL: openai.url },
    });
    database = await openDatabase({ databaseUrl: cluster.databaseUrl });
    // Through the second API process: the first one's training is the one that hangs (later).
    const withIdentity = async (email: string) => {
      const auth = await newAccount(email);
      const identity = await fetch(`${cluster.apis[1]!.url}/v1/identities`, {
        method: 'POST',
        headers: { authorization: auth },
        body: await identityForm({ language: 'en' }),
      });
      expect(identity.status).toBe(200);
      return { authorization: auth, identityId: ((await identity.json()) as IdentityBody).identity_id };
    };
    // The three at once: nothing orders them.
    const [main, ...rest] = await Promise.all(
      ['cluster@example.com', 'cluster-b@example.com', 'cluster-c@example.com'].map(withIdentity),
    );
    ({ authorization, identityId } = main!);
    others.push(...rest);
  }, 180_000);
  afterAll(async () => {
    await database?.close();
    await cluster?.stop();
    await openai?.stop();
    receiver.stop();
  });

  test('both API processes came up at once on the empty Postgres; each migration ran once', async () => {
    const sql = new SQL(cluster.databaseUrl);
    try {
      const [migrations] = (await sql`select count(*)::int as n from drizzle.__drizzle_migrations`) as { n: number }[];
      expect(migrations?.n).toBe(
        readdirSync(join(import.meta.dir, '../../drizzle')).filter((name) => name.endsWith('.sql')).length,
      );
    } finally {
      await sql.close();
    }
    // Prometheus scrapes each replica with compose's METRICS_TOKEN; the fleet's gauges agree.
    const scrapes = await Promise.all(
      cluster.apis.map(async (api) =>
        (await fetch(`${api.url}/metrics`, { headers: { authorization: `Bearer ${cluster.metricsToken}` } })).text(),
      ),
    );
    const workers = scrapes.map((text) => Number(/^likeness_agent_workers (\d+)$/m.exec(text)?.[1]));
    expect(workers).toEqual([2, 2]);
  });

  test('sessions started alternately through both API processes land on both workers and both LiveKit nodes; each ends through the other one', async () => {
    const visits: Awaited<ReturnType<typeof visit>>[] = [];
    try {
      // Four slots: the first account takes two, then two accounts that run none the rest.
      const accounts = [{ authorization, identityId }, { authorization, identityId }, ...others];
      for (let i = 0; i < 4; i++) {
        // LiveKit nodes share their room counts through Redis every few seconds: the next room
        // goes where the last one is already counted. (Each node's own gauge, read below, is not
        // waited for: it counts a room as it starts.)
        if (i > 0) await Bun.sleep(2_500);
        visits.push(await visit(cluster.apis[i % 2]!.url, accounts[i]));
      }
      const ids = visits.map((v) => v.session.room_name);
      const workers = await eventually(
        async () => {
          const rows = await database.db
            .select({ worker: sessions.agentWorkerId })
            .from(sessions)
            .where(inArray(sessions.id, ids));
          return rows.every((r) => r.worker) ? new Set(rows.map((r) => r.worker)) : undefined;
        },
        10_000,
        'every session on a worker',
      );
      expect([...workers].sort()).toEqual(cluster.agents.map((a) => a.workerId).sort());
      // Each node's gauge of the rooms it holds (run 42 once read 3 of the 4, every avatar streaming:
      // read again for a few seconds before failing, and the figures are in the failure).
      let rooms: number[] = [];
      await eventually(
        async () => {
          rooms = await Promise.all(cluster.nodes.map((node) => node.rooms()));
          return rooms.every((n) => n >= 1) && rooms.reduce((a, b) => a + b) === 4;
        },
        10_000,
        'both nodes to count the four rooms',
      ).catch(() => undefined);
      expect<object>({ rooms, total: rooms.reduce((a, b) => a + b) }).toEqual({
        rooms: rooms.map((n) => (n >= 1 ? n : 'none')),
        total: 4,
      });
      for (const [i, { session }] of visits.entries()) {
        const ended = await call(
          cluster.apis[(i + 1) % 2]!.url,
          'POST',
          `/v1/sessions/${session.room_name}/end`,
          undefined,
          accounts[i]!.authorization,
        );
        expect(ended.status).toBe(200);
        expect(((await ended.json()) as { status: string }).status).toBe('ended');
      }
      // LiveKit's webhooks and the jobs' reports went through the load balancer to both processes.
      for (const api of cluster.apis) {
        const received = cluster.balancer.received.get(api.url)!;
        expect(received.get('/internal/livekit/webhook') ?? 0).toBeGreaterThan(0);
        expect(received.get('/internal/sessions') ?? 0).toBeGreaterThan(0);
        expect(received.get('/internal/workers/heartbeat') ?? 0).toBeGreaterThan(0);
      }
    } finally {
      for (const { visitor, videos } of visits) {
        videos.forEach((v) => v.close());
        await visitor.leave().catch(() => undefined);
      }
    }
  }, 180_000);

  test("admission's fair share holds across both API processes: an account takes 3 of the 4 slots, the last is kept for an account that runs none", async () => {
    const hog = await newAccount('cluster-hog@example.com');
    const newcomer = await newAccount('cluster-newcomer@example.com');
    let started: { auth: string; room: string }[] = [];
    const endStarted = async () => {
      for (const { auth, room } of started)
        await call(cluster.balancer.url, 'POST', `/v1/sessions/${room}/end`, undefined, auth);
      started = [];
    };
    /** The hog's five starts, alternately through both processes once every slot is free: their statuses. */
    const hogStarts = async (): Promise<number[]> => {
      await eventually(
        async () => (await freeAgentSlots(database.db, 'likeness-agent', 60)).free >= 4,
        30_000,
        'every slot free',
      );
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const answer = await call(
          cluster.apis[i % 2]!.url,
          'POST',
          '/v1/sessions/start',
          { avatar_enabled: false },
          hog,
        );
        statuses.push(answer.status);
        if (answer.status === 200)
          started.push({ auth: hog, room: ((await answer.json()) as StartedSession).room_name });
        else expect(answer.headers.get('retry-after')).toBe('15');
      }
      return statuses;
    };
    try {
      let statuses = await hogStarts();
      // A worker whose heartbeats pause for 6 s (twice HEARTBEAT_TTL_SECONDS) is out of the fleet
      // until its next one; before that grace one paused 3 s was, once (run 84: 200, 200, 429, …).
      if (statuses.join() !== '200,200,200,429,429') {
        console.log(`the hog's starts: ${statuses.join(', ')}; again once the fleet is whole`);
        await endStarted();
        statuses = await hogStarts();
      }
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      const last = await call(cluster.balancer.url, 'POST', '/v1/sessions/start', { avatar_enabled: false }, newcomer);
      expect(last.status).toBe(200);
      started.push({ auth: newcomer, room: ((await last.json()) as StartedSession).room_name });
    } finally {
      await endStarted();
    }
  }, 120_000);

  test('say through the API process that did not start the session reaches the agent on either worker', async () => {
    await eventually(
      async () => (await freeAgentSlots(database.db, 'likeness-agent', 60)).free >= 4,
      30_000,
      'every slot free',
    );
    const visits: (Awaited<ReturnType<typeof visit>> & { startedThrough: number; worker: string })[] = [];
    try {
      // Sessions until both workers run one (an account may run three here).
      for (let i = 0; i < 3 && new Set(visits.map((v) => v.worker)).size < 2; i++) {
        // Spaced as above; none after the last.
        if (i > 0) await Bun.sleep(2_500);
        const visited = await visit(cluster.apis[i % 2]!.url);
        const worker = await eventually(
          async () => (await row(visited.session.room_name)).agentWorkerId,
          10_000,
          'its worker',
        );
        visits.push({ ...visited, startedThrough: i % 2, worker });
      }
      expect(new Set(visits.map((v) => v.worker)).size).toBe(2);
      for (const { session, startedThrough } of visits) {
        const through = cluster.apis[(startedThrough + 1) % 2]!.url;
        const text = `Said through the other API process, ${session.room_name.slice(-4)}.`;
        // The agent takes orders once its conversation has started (the visitor is in).
        const said = await eventually(
          async () => {
            const answer = await call(through, 'POST', `/v1/sessions/${session.room_name}/say`, { text });
            return answer.status === 200 ? answer : undefined;
          },
          30_000,
          'the say taken',
        );
        expect(((await said.json()) as { operation: string }).operation).toBe('say');
        await eventually(
          async () => {
            const transcript = (await (
              await call(cluster.balancer.url, 'GET', `/v1/sessions/${session.room_name}/transcript`)
            ).json()) as { turns: { text: string; ordered_by: string | null }[] };
            return transcript.turns.some((t) => t.text === text && t.ordered_by === 'api');
          },
          30_000,
          'the said turn in the transcript',
        );
      }
    } finally {
      for (const { session, visitor, videos } of visits) {
        videos.forEach((v) => v.close());
        await visitor.leave().catch(() => undefined);
        await call(cluster.balancer.url, 'POST', `/v1/sessions/${session.room_name}/end`);
      }
    }
  }, 120_000);

  test('tools and documents across both API processes and both workers: made through one, read through the other; sessions on each worker call the signed tool and answer from the document', async () => {
    // Awaited before the first session: the document and the tool are made while the last test's jobs leave.
    const slotsFree = eventually(
      async () => (await freeAgentSlots(database.db, 'likeness-agent', 60)).free >= 4,
      30_000,
      'every slot free',
    );
    slotsFree.catch(() => undefined); // awaited below
    const [first, second] = cluster.apis;
    const upload = new FormData();
    upload.append(
      'file',
      new File(
        [
          '# Visiting the clinic\n\nParking: patients park free in the underground garage at Calle Mayor 12, level -2. ' +
            'Show your appointment letter at the barrier.\n\nThe waiting room is on the first floor.',
        ],
        'clinic.md',
        { type: 'text/markdown' },
      ),
    );
    const uploaded = await fetch(`${first!.url}/v1/documents`, {
      method: 'POST',
      headers: { authorization },
      body: upload,
    });
    expect(uploaded.status).toBe(202);
    const { document_id: documentId } = (await uploaded.json()) as { document_id: string };
    await eventually(
      async () =>
        ((await (await call(second!.url, 'GET', `/v1/documents/${documentId}`)).json()) as { status: string })
          .status === 'ready',
      60_000,
      'the document ready, read through the other API process',
    );
    const created = await call(second!.url, 'POST', '/v1/tools', {
      name: 'get_appointment',
      type: 'webhook',
      description: "Look up the visitor's appointment on a day",
      parameters: { type: 'object', properties: { date: { type: 'string' } }, required: ['date'] },
      url: receiver.url,
    });
    expect(created.status).toBe(201);
    const tool = (await created.json()) as { tool_id: string; secret: string };
    receiver.secret = tool.secret;
    expect((await call(first!.url, 'GET', `/v1/tools/${tool.tool_id}`)).status).toBe(200);
    await slotsFree;

    const visits: { session: StartedSession; visitor: Awaited<ReturnType<typeof joinAsVisitor>>; worker: string }[] =
      [];
    try {
      for (let i = 0; i < 3 && new Set(visits.map((v) => v.worker)).size < 2; i++) {
        const session = await admitted(cluster.apis[i % 2]!.url, {
          identity_id: identityId,
          tool_ids: [tool.tool_id],
          document_ids: [documentId],
        });
        const visitor = await joinAsVisitor(session, { audioOnly: true }).catch((error) => {
          console.log(`the visitor could not join ${session.room_name} through ${session.rtc_url}`);
          throw error;
        });
        const worker = await eventually(async () => (await row(session.room_name)).agentWorkerId, 20_000, 'its worker');
        visits.push({ session, visitor, worker });
      }
      if (new Set(visits.map((v) => v.worker)).size < 2)
        console.log('the sessions landed on', visits.map((v) => v.worker).join(', '), 'only');
      expect(new Set(visits.map((v) => v.worker)).size).toBe(2);
      for (const { session, visitor } of visits) {
        type Turn = {
          role: string;
          text: string;
          tool_call: { name: string; outcome: string } | null;
          document_ids: string[] | null;
        };
        const turns = async () =>
          (
            (await (
              await call(cluster.balancer.url, 'GET', `/v1/sessions/${session.room_name}/transcript`)
            ).json()) as {
              turns: Turn[];
            }
          ).turns;
        // Typed until the agent takes it (it takes the visitor's chat once its conversation started).
        let lastSent = 0;
        const answered = await eventually(
          async () => {
            const now = await turns();
            if (!now.some((t) => t.role === 'user') && performance.now() - lastSent > 8_000) {
              lastSent = performance.now();
              await visitor.room.localParticipant!.sendText(
                'Is my appointment on Tuesday still on, and where do I park?',
                {
                  topic: CHAT_TOPIC,
                },
              );
            }
            return now.some((t) => t.role === 'agent' && t.text.includes('10:30')) ? now : undefined;
          },
          60_000,
          'the answer with the tool result',
        ).catch(async (error) => {
          console.log('transcript so far:', JSON.stringify(await turns()), 'model requests:', openai.chats.length);
          // What each process said of this session (the API processes' watch, the agents' jobs).
          const said = (output: string) =>
            output
              .split('\n')
              .filter((line) => line.includes(session.room_name))
              .join('\n');
          for (const [i, api] of cluster.apis.entries()) console.log(`API ${i}:\n${said(api.output())}`);
          for (const [i, agent] of cluster.agents.entries()) console.log(`agent ${i}:\n${said(agent.output())}`);
          throw error;
        });
        expect(answered.find((t) => t.role === 'tool')?.tool_call).toMatchObject({
          name: 'get_appointment',
          outcome: 'ok',
        });
        const answer = answered.find((t) => t.role === 'agent' && t.text.includes('10:30'))!;
        expect(answer.text).toContain('Calle Mayor 12');
        expect(answer.document_ids).toEqual([documentId]);
        expect(toolCalls.some((c) => c.session_id === session.room_name && c.arguments.date === 'Tuesday')).toBe(true);
        expect(receiver.rejected).toEqual([]);
      }
    } finally {
      for (const { session, visitor } of visits) {
        await visitor.leave().catch(() => undefined);
        await call(cluster.balancer.url, 'POST', `/v1/sessions/${session.room_name}/end`);
      }
    }
  }, 240_000);

  test('a worker SIGKILLed mid-conversation: the other brings the avatar back into the same room; the visitor stays', async () => {
    const { session, visitor, videos } = await visit(cluster.apis[0]!.url);
    try {
      await eventually(async () => (await row(session.room_name)).billedMinutes >= 1, 15_000, 'a billed minute');
      const workerId = await eventually(async () => (await row(session.room_name)).agentWorkerId, 10_000, 'its worker');
      const victim = cluster.agents.find((a) => a.workerId === workerId)!;
      victim.kill();
      const killedAt = performance.now();
      await eventually(() => (videos[1]?.frames.length ?? 0) > 0, 30_000, 'the avatar back');
      console.log(
        `cluster failover: SIGKILL → first avatar frame again in ${Math.round(videos[1]!.frames[0]!.at - killedAt)} ms`,
      );
      expect(visitor.room.isConnected).toBe(true);
      // The session's worker is what heartbeats report: the survivor's next one names it (the
      // avatar's frames may come back before it, since keyframes are asked for every 100 ms).
      const after = await eventually(
        async () => {
          const current = await row(session.room_name);
          return current.agentWorkerId !== workerId ? current : undefined;
        },
        10_000,
        'the surviving worker to report the session',
      );
      expect(after.status).toBe('running');
      expect(after.agentWorkerId).not.toBe(workerId);
      cluster.agents.splice(cluster.agents.indexOf(victim), 1);
    } finally {
      videos.forEach((v) => v.close());
      await visitor.leave();
      await call(cluster.apis[1]!.url, 'POST', `/v1/sessions/${session.room_name}/end`);
    }
  }, 90_000);

  test('an API process SIGKILLed: the other serves through the load balancer, ends its sessions, and finishes its retrain', async () => {
    const [first, second] = cluster.apis;
    // A session nobody joins, started through the first process; a retrain that hangs in it.
    const lonely = await admitted(first!.url, { identity_id: identityId });
    const retrain = await fetch(`${first!.url}/v1/identities/${identityId}`, {
      method: 'PATCH',
      headers: { authorization },
      body: form({ prompt: 'after the failover', image: file(fx.portraitPng(), 'new.png') }),
    });
    expect(retrain.status).toBe(202);
    first!.kill();
    await first!.child.exited;

    // Everything answers through the load balancer, now from the second process alone.
    const read = async () =>
      (await (await call(cluster.balancer.url, 'GET', `/v1/identities/${identityId}`)).json()) as IdentityBody;
    expect((await read()).status).toBe('training');
    await eventually(async () => (await read()).status === 'ready', 30_000, 'the retrain finished by the survivor');
    expect(await read()).toMatchObject({ prompt: 'after the failover', detail: null });
    // Its sweeper ends the first process's session when nobody joined in time.
    await eventually(async () => (await row(lonely.room_name)).status === 'ended', 30_000, 'the lonely session ended');
    expect((await row(lonely.room_name)).endReason).toBe('no_join');
    expect((await call(second!.url, 'GET', '/v1/sessions?limit=1')).status).toBe(200);
  }, 90_000);
});
