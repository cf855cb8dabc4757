// The summary of a conversation on the offline models (issue 32, point 6): with no cloud key, the
// job summarises with the offline reply model, in the session's language, about what was said.
// An agent-only process with an environment without keys, as in offline-conversation.test.ts;
// the visitor types (Whisper is not the point here).
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import { CHAT_TOPIC } from '../../agent/conversation/chat.ts';
import { type IdentityBody, identityForm } from '../support/forms.ts';
import { collectOutput, readUntil, tempDir } from '../support/processes.ts';
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

const dirs: string[] = [];
let service: TestService;
let account: TestAccount;
let agent: Subprocess<'ignore', 'pipe', 'pipe'>;
let agentLog: { text(): string }[] = [];

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
    DATA_DIR: await tempDir(dirs, 'likeness-offline-summary-'),
    INTERNAL_URL: service.url,
  };
  for (const key of PROVIDER_KEYS) delete env[key];
  agent = Bun.spawn(['bun', CLI, 'serve', '--role', 'agent'], { env, stdout: 'pipe', stderr: 'pipe' });
  await readUntil(agent.stdout, 'agent worker registered');
  agentLog = [collectOutput(agent.stdout), collectOutput(agent.stderr)];
}, 120_000);

afterAll(async () => {
  agent?.kill('SIGTERM');
  await agent?.exited;
  await service.stop();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** What the agent process logged about a session. */
function jobLines(sessionId: string): string {
  const lines = agentLog.flatMap((log) => log.text().split('\n')).filter((line) => line.includes(sessionId));
  return lines.filter((line) => !line.includes('event loop')).join('\n');
}

interface Turn {
  role: string;
  text: string;
}

async function summaryOf(
  language: string,
  prompt: string,
  question: string,
): Promise<{ summary: string; turns: Turn[] }> {
  const identity = (await (
    await account.call('POST', '/v1/identities', {
      body: await identityForm({ name: 'Ada', language, prompt, voice_id: language === 'en' ? undefined : 'adam' }),
    })
  ).json()) as IdentityBody;
  const started = await account.call('POST', '/v1/sessions/start', {
    body: JSON.stringify({ identity_id: identity.identity_id, avatar_enabled: false }),
    headers: { 'content-type': 'application/json' },
  });
  expect(started.status).toBe(200);
  const session = (await started.json()) as StartedSession;
  const visitor = await joinAsVisitor(session, { audioOnly: true });
  const transcript = async () =>
    ((await (await account.call('GET', `/v1/sessions/${session.room_name}/transcript`)).json()) as { turns: Turn[] })
      .turns;
  try {
    await eventually(() => visitor.agent(), 60_000, 'the agent');
    // Typed until the conversation (started once the models are in) takes it, 2 s apart.
    await eventually(
      async () => {
        await visitor.room.localParticipant!.sendText(question, { topic: CHAT_TOPIC });
        await Bun.sleep(2_100);
        return (await transcript()).some((turn) => turn.role === 'user');
      },
      90_000,
      'the typed turn',
    );
    // The reply, if it comes soon: the summary is of whatever the conversation holds by the end.
    await eventually(
      async () => (await transcript()).filter((turn) => turn.role === 'agent').length >= 2,
      30_000,
      'the reply',
    ).catch(() => console.log(jobLines(session.room_name)));
  } finally {
    await visitor.leave().catch(() => undefined);
    await account.call('POST', `/v1/sessions/${session.room_name}/end`);
  }
  const body = await eventually(
    async () => {
      const current = (await (await account.call('GET', `/v1/sessions/${session.room_name}`)).json()) as {
        summary: string | null;
        summary_status: string;
        summary_detail: string | null;
      };
      return current.summary_status === 'ready' || current.summary_status === 'failed' ? current : undefined;
    },
    60_000,
    'the summary',
  ).catch((error: unknown) => {
    console.log(jobLines(session.room_name));
    throw error;
  });
  expect(body).toMatchObject({ summary_status: 'ready', summary_detail: null });
  return { summary: body.summary!, turns: await transcript() };
}

test('the offline model summarises the conversation in its language, about its topic', async () => {
  const { summary, turns } = await summaryOf(
    'en',
    'You are Ada, a friendly guide at the city museum. Answer in one short sentence.',
    'What time does the museum open on Sunday?',
  );
  console.log(`offline summary: ${JSON.stringify(summary)} of ${JSON.stringify(turns)}`);
  expect(summary.length).toBeGreaterThan(10);
  expect(summary.match(/[.!?…](\s|$)/g)?.length ?? 1).toBeLessThanOrEqual(3);
  expect(summary.toLowerCase()).toMatch(/museum|sunday|open/);
  // English only: the reply model writes English's letters in an English session.
  expect(summary).toMatch(/^[\x20-\x7e]+$/);
}, 240_000);

test('a Spanish session is summarised in Spanish', async () => {
  const { summary, turns } = await summaryOf(
    'es',
    'Eres Ada, una guía amable del museo de la ciudad. Responde con una frase corta.',
    '¿A qué hora abre el museo el domingo?',
  );
  console.log(`offline summary (es): ${JSON.stringify(summary)} of ${JSON.stringify(turns)}`);
  expect(summary.length).toBeGreaterThan(10);
  expect(summary.toLowerCase()).toMatch(/museo|domingo|abre|hora/);
}, 240_000);
