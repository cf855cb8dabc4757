// The operator CLI (`bun run likeness …`): one JSON line per command, the same whether it
// opens the database itself or goes through a running service's admin endpoint. Each folder and
// database starts migrated (test/support/database-templates.ts): what is run is the CLI, not
// initdb and the migrations (test/db covers migrating an empty database). One service serves
// the file, started beside the first test.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { migratedDatabase, seededDataDir } from '../support/database-templates.ts';
import { drain, readUntil, tempDir } from '../support/processes.ts';
import { runCommand } from '../support/run-command.ts';

const CLI = join(import.meta.dir, '../../src/cli/index.ts');

async function likeness(env: Record<string, string>, ...args: string[]) {
  return likenessWithInput(env, undefined, ...args);
}

async function likenessWithInput(env: Record<string, string>, input: string | undefined, ...args: string[]) {
  const { code, stdout, stderr } = await runCommand(['bun', CLI, ...args], {
    env: { ...process.env, ...env },
    stdin: input === undefined ? undefined : new Blob([input]),
  });
  return { code, stdout, stderr, json: () => JSON.parse(stdout.trim()) };
}

async function exercise(env: Record<string, string>, baseUrl?: string) {
  const email = `ops-${Date.now()}@example.com`;
  const created = await likeness(env, 'accounts', 'create', '--email', email, '--credits', '75');
  expect(created.code).toBe(0);
  expect(created.stdout.trim().split('\n')).toHaveLength(1);
  const account = { ...(created.json() as { account_id: string; api_key: string }), email };
  expect(account.account_id).toMatch(/^acc_/);
  expect(account.api_key).toMatch(/^lk_[0-9A-Za-z]{43}$/);

  expect((await likeness(env, 'credits', 'balance', '--account', account.account_id)).json()).toEqual({
    account_id: account.account_id,
    balance: 75,
  });
  expect((await likeness(env, 'credits', 'grant', '--account', account.account_id, '--amount', '25')).json()).toEqual({
    account_id: account.account_id,
    balance: 100,
  });

  // An account's own limits: set some, read them back with the service's for the rest, reset.
  const limited = (
    await likeness(
      env,
      'limits',
      'set',
      '--account',
      account.account_id,
      '--concurrent-sessions',
      '4',
      '--identity-creates-per-hour',
      '0',
    )
  ).json();
  expect(limited).toMatchObject({
    account_id: account.account_id,
    own: { concurrent_sessions: 4, identity_creates_per_hour: 0 },
    limits: { concurrent_sessions: 4, identity_creates_per_hour: 0, session_starts_per_minute: 20 },
  });
  expect((await likeness(env, 'limits', 'show', '--account', account.account_id)).json()).toEqual(limited);
  expect((await likeness(env, 'limits', 'set', '--account', account.account_id, '--reset')).json()).toMatchObject({
    own: {},
    limits: { concurrent_sessions: 10 },
  });
  expect(
    (await likeness(env, 'limits', 'set', '--account', account.account_id, '--concurrent-sessions', 'many')).code,
  ).toBe(2);

  const key = (await likeness(env, 'keys', 'create', '--account', account.account_id, '--name', 'ci')).json() as {
    key_id: string;
    api_key: string;
  };
  expect(key.api_key).toMatch(/^lk_/);
  const listed = (await likeness(env, 'keys', 'list', '--account', account.account_id)).json() as {
    key_id: string;
    name: string;
    revoked_at: string | null;
  }[];
  expect(listed.map((k) => k.key_id)).toContain(key.key_id);
  expect(JSON.stringify(listed)).not.toContain(key.api_key);
  if (baseUrl) {
    expect((await fetch(`${baseUrl}/v1/identities`, { headers: { 'x-api-key': key.api_key } })).status).toBe(200);
  }
  expect((await likeness(env, 'keys', 'revoke', '--account', account.account_id, '--key', key.key_id)).json()).toEqual({
    key_id: key.key_id,
    revoked: true,
  });
  if (baseUrl) {
    expect((await fetch(`${baseUrl}/v1/identities`, { headers: { 'x-api-key': key.api_key } })).status).toBe(401);
  }
  const again = await likeness(env, 'keys', 'revoke', '--account', account.account_id, '--key', key.key_id);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain(key.key_id);

  const missing = await likeness(env, 'credits', 'balance', '--account', 'acc_nobody');
  expect(missing.code).toBe(1);
  expect(missing.stderr).toContain('acc_nobody');
  // Past what a balance can hold: a clear error, nothing granted (it was a 500).
  const huge = await likeness(env, 'credits', 'grant', '--account', account.account_id, '--amount', '3000000000');
  expect(huge.code).toBe(1);
  expect(huge.stderr).toContain('cannot exceed 2147483647');
  expect((await likeness(env, 'credits', 'balance', '--account', account.account_id)).json()).toEqual({
    account_id: account.account_id,
    balance: 100,
  });
  const usage = await likeness(env, 'credits', 'grant', '--account', account.account_id);
  expect(usage.code).toBe(2);
  expect(usage.stderr).toContain('--amount');
  await consolePassword(env, account, baseUrl);
  const duplicate = await likeness(env, 'accounts', 'create', '--email', 'dup@example.com');
  const duplicateAgain = await likeness(env, 'accounts', 'create', '--email', 'dup@example.com');
  expect(duplicate.code).toBe(0);
  expect(duplicateAgain.code).toBe(1);
}

/** An account made here gets a console password from standard input; a new one signs every browser out. */
async function consolePassword(
  env: Record<string, string>,
  account: { account_id: string; email: string },
  baseUrl?: string,
) {
  const set = (password: string | undefined, id = account.account_id) =>
    likenessWithInput(env, password, 'accounts', 'set-password', '--account', id);
  const short = await set('too short\n');
  expect(short.code).toBe(1);
  expect(short.stderr).toContain('10 to 256 characters');
  expect((await set('a long enough password', 'acc_nobody')).stderr).toContain('acc_nobody');
  expect((await set('a long enough password\n')).json()).toEqual({
    account_id: account.account_id,
    console_sessions_ended: 0,
  });
  if (!baseUrl) return;
  const signIn = (password: string) =>
    fetch(`${baseUrl}/console/api/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: account.email, password }),
    });
  // The trailing newline from the pipe is not part of the password.
  const signedIn = await signIn('a long enough password');
  expect(signedIn.status).toBe(200);
  const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
  expect((await fetch(`${baseUrl}/console/api/me`, { headers: { cookie } })).status).toBe(200);
  // A reset: the old password stops working and the open browser session ends.
  expect((await set('another long password')).json()).toEqual({
    account_id: account.account_id,
    console_sessions_ended: 1,
  });
  expect((await fetch(`${baseUrl}/console/api/me`, { headers: { cookie } })).status).toBe(401);
  expect((await signIn('a long enough password')).status).toBe(401);
  expect((await signIn('another long password')).status).toBe(200);
}

const dirs: string[] = [];
/**
 * One `likeness serve` on the embedded database for the file, started here and left to come up
 * while the first test runs: the CLI goes through it, and a second service is refused beside it.
 */
let serving: { dataDir: string; port: string; server: Bun.Subprocess<'ignore', 'pipe', 'inherit'> } | undefined;
let listening: Promise<void>;
beforeAll(async () => {
  const dataDir = await seededDataDir(dirs, 'likeness-cli-');
  // A port free now (a random one collided with an ephemeral port in a clean run).
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
  const port = String(probe.port);
  probe.stop(true);
  const server = Bun.spawn(['bun', CLI, 'serve'], {
    env: { ...process.env, DATA_DIR: dataDir, PORT: port, HOST: '127.0.0.1' },
    stdout: 'pipe',
    stderr: 'inherit',
  });
  serving = { dataDir, port, server };
  // Read from now on (its lines never fill the pipe); awaited by the tests that need it.
  listening = readUntil(server.stdout, 'listening').then(() => drain(server.stdout));
  listening.catch(() => undefined);
});
/** The file's service, once it listens. */
const running = async () => {
  await listening;
  return serving!;
};
afterAll(async () => {
  if (serving) {
    serving.server.kill('SIGTERM');
    await serving.server.exited;
  }
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('likeness CLI', () => {
  test('works on the embedded database while no service runs', async () => {
    const dataDir = await seededDataDir(dirs, 'likeness-cli-');
    await exercise({ DATA_DIR: dataDir });
  });

  test('goes through the running service when it holds the embedded database', async () => {
    const { dataDir, port } = await running();
    await exercise({ DATA_DIR: dataDir }, `http://127.0.0.1:${port}`);
  });

  test('works directly on Postgres', async () => {
    const dataDir = await tempDir(dirs, 'likeness-cli-');
    await exercise({ DATA_DIR: dataDir, DATABASE_URL: await migratedDatabase() });
  });
});

describe('one embedded service per data folder', () => {
  test('a second service on the same DATA_DIR or port refuses to start', async () => {
    // The file's service holds its folder and its port; the two tries go at once, each refused
    // on its own ground.
    const { dataDir, port } = await running();
    const otherDir = await seededDataDir(dirs, 'likeness-twice-');
    const [sameFolder, samePort] = await Promise.all([
      likeness({ DATA_DIR: dataDir, PORT: String(Number(port) + 1) }, 'serve'),
      likeness({ DATA_DIR: otherDir, PORT: port, HOST: '127.0.0.1' }, 'serve'),
    ]);
    expect(sameFolder.code).toBe(1);
    expect(sameFolder.stderr).toContain('Another Likeness service');
    expect(samePort.code).toBe(1);
    expect(samePort.stderr).toContain(`port ${port}`);
  });
});
