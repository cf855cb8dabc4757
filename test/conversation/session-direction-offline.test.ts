// The start's `context` with the offline reply model (docs/api.md#sessions-context): an
// agent-only process without any cloud key, as an operator runs one, and a fact only the
// context gives. The visitor types the question (typed chat is answered like speech), so
// the model is what is tested, not Whisper. The wire fakes' side is session-direction.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import { CHAT_TOPIC } from '../../src/contract/index.ts';
import { type IdentityBody, identityForm } from '../support/forms.ts';
import { drain, readUntil, tempDir } from '../support/processes.ts';
import { startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { eventually, joinAsVisitor, type StartedSession } from '../support/visitor.ts';

const CLI = join(import.meta.dir, '../../src/cli/index.ts');
const PROVIDER_KEYS = [
  'DEEPGRAM_API_KEY',
  'DEEPGRAM_BASE_URL',
  'OPENAI_API_KEY',
  'OPENAI_BASE_URL',
  'ELEVENLABS_API_KEY',
  'ELEVENLABS_BASE_URL',
];

interface Turn {
  role: 'user' | 'agent';
  text: string;
}

describe("the start's context with the offline model", () => {
  const dirs: string[] = [];
  let service: TestService;
  let account: TestAccount;
  let agent: Subprocess<'ignore', 'pipe', 'pipe'>;
  let identity: IdentityBody;

  beforeAll(async () => {
    service = await startTestService('pglite', { livekit: 'local', env: { CREDITS_ONBOARDING: '0' } });
    account = await service.account({ credits: 10_000 });
    const { livekit } = service.services;
    const env: Record<string, string | undefined> = {
      ...process.env,
      HOST: '127.0.0.1',
      LIVEKIT_URL: livekit.url,
      LIVEKIT_API_KEY: livekit.apiKey,
      LIVEKIT_API_SECRET: livekit.apiSecret,
      DATA_DIR: await tempDir(dirs, 'likeness-direction-offline-'),
      INTERNAL_URL: service.url,
    };
    for (const key of PROVIDER_KEYS) delete env[key];
    agent = Bun.spawn(['bun', CLI, 'serve', '--role', 'agent'], { env, stdout: 'pipe', stderr: 'pipe' });
    await readUntil(agent.stdout, 'agent worker registered');
    drain(agent.stdout);
    drain(agent.stderr);
    identity = (await (
      await account.call('POST', '/v1/identities', {
        body: await identityForm({ language: 'en', prompt: 'You are Ada, a friendly shop assistant.' }),
      })
    ).json()) as IdentityBody;
  }, 120_000);

  afterAll(async () => {
    agent?.kill('SIGTERM');
    await agent?.exited;
    await service.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  /** Asks by typed chat (again, 2 s apart, until the conversation took it) and returns the turns. */
  async function askName(): Promise<Turn[]> {
    const started = await account.call('POST', '/v1/sessions/start', {
      body: JSON.stringify({
        identity_id: identity.identity_id,
        avatar_enabled: false,
        context: "The visitor's name is Zofia.",
        idle_timeout_seconds: 0,
      }),
      headers: { 'content-type': 'application/json' },
    });
    expect(started.status).toBe(200);
    const session = (await started.json()) as StartedSession;
    const visitor = await joinAsVisitor(session);
    const turns = async () =>
      (
        (await (await account.call('GET', `/v1/sessions/${session.room_name}/transcript`)).json()) as {
          turns: Turn[];
        }
      ).turns;
    try {
      await eventually(() => visitor.agent(), 60_000, 'the agent');
      await eventually(
        async () => {
          await visitor.room.localParticipant!.sendText('What is my name?', { topic: CHAT_TOPIC });
          await Bun.sleep(2_100);
          return (await turns()).some((t) => t.role === 'user');
        },
        90_000,
        'the question to reach the conversation',
      );
      return await eventually(
        async () => {
          const all = await turns();
          const asked = all.findIndex((t) => t.role === 'user');
          return all.slice(asked).some((t) => t.role === 'agent') ? all : undefined;
        },
        // A loaded 2-core machine took 10 s for the first offline reply.
        120_000,
        'the offline reply',
      );
    } finally {
      await account.call('POST', `/v1/sessions/${session.room_name}/end`);
      await visitor.leave().catch(() => undefined);
    }
  }

  test('the visitor asks their name and the reply says it, from the first reply', async () => {
    const turns = await askName();
    console.log(`offline, with a context: ${JSON.stringify(turns)}`);
    const asked = turns.findIndex((t) => t.role === 'user');
    expect(turns[asked]!.text).toBe('What is my name?');
    // The 0.5B model mirrors the question's pronoun ("My name is Zofia."); without the context it names itself, Ada.
    expect(turns.slice(asked).find((t) => t.role === 'agent')!.text).toContain('Zofia');
  }, 300_000);
});
