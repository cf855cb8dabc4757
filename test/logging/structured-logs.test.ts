// Logs (README.md#logs): `likeness serve` writes JSON lines on stdout, one access-log
// line per request with its request id, route and account; one `grep ses_…` finds a session's
// lines from the API and from its agent job (another process); and no API key, admin token,
// password, cookie or room token appears anywhere in what the service prints.
import { afterAll, expect, test } from 'bun:test';
import { astronautPhoto } from '../avatar/support.ts';
import { seededDataDir } from '../support/database-templates.ts';
import { identityForm } from '../support/forms.ts';
import { sharedProviderFakes } from '../support/preload.ts';
import { collectOutput } from '../support/processes.ts';
import { accountByAdmin, adminTokenOf, servedProcesses } from '../support/served-process.ts';
import { eventually, joinAsVisitor, type StartedSession } from '../support/visitor.ts';

const PASSWORD = 'correct horse battery staple';
const fakes = sharedProviderFakes();
const served = servedProcesses();
afterAll(() => served.stop());

test('JSON lines with request, account, identity and session ids; a session followed by its id across processes; no secret printed', async () => {
  const dataDir = await seededDataDir(served.dirs, 'likeness-logs-');
  const { child, url } = await served.spawn({ ...fakes.env, DATA_DIR: dataDir, LOG_FORMAT: 'json', LOG_LEVEL: 'info' });
  const stdout = collectOutput(child.stdout);
  const stderr = collectOutput(child.stderr);
  await eventually(async () => (await fetch(`${url}/readyz`).catch(() => undefined))?.status === 200, 90_000, 'ready');

  const adminToken = await adminTokenOf(dataDir);
  const account = await accountByAdmin(url, dataDir, { email: 'logs@example.com', credits: 10_000 });
  const authorization = `Bearer ${account.api_key}`;
  const signUp = await fetch(`${url}/console/api/sign-up`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'console@example.com', password: PASSWORD }),
  });
  expect(signUp.status).toBe(201);
  const cookie = signUp.headers.get('set-cookie')!.split(';')[0]!;
  const consoleKey = ((await signUp.json()) as { api_key: { api_key: string } }).api_key.api_key;
  expect((await fetch(`${url}/console/api/me`, { headers: { cookie } })).status).toBe(200);
  expect(
    (
      await fetch(`${url}/v1/identities`, {
        headers: { authorization: 'Bearer lk_notakeynotakeynotakeynotakeynotakeynotakey1' },
      })
    ).status,
  ).toBe(401);

  const created = await fetch(`${url}/v1/identities`, {
    method: 'POST',
    headers: { authorization },
    body: await identityForm({ image: await astronautPhoto(), language: 'en' }),
  });
  expect(created.status).toBe(200);
  const identityId = ((await created.json()) as { identity_id: string }).identity_id;
  const started = await fetch(`${url}/v1/sessions/start`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ identity_id: identityId }),
  });
  expect(started.status).toBe(200);
  const session = (await started.json()) as StartedSession;
  const visitor = await joinAsVisitor(session, { audioOnly: true });
  await eventually(() => visitor.agent(), 30_000, 'the agent');
  // The job logs its providers once the conversation is set up.
  await eventually(() => stdout.text().includes('conversation providers'), 20_000, "the job's first line");
  await fetch(`${url}/v1/sessions/${session.room_name}/end`, { method: 'POST', headers: { authorization } });
  await visitor.leave();
  await fetch(`${url}/rtc?access_token=${session.token}`);
  await eventually(() => stdout.text().includes('"session ended"'), 10_000, 'the end logged');
  child.kill('SIGTERM');
  await child.exited;

  const lines = stdout.text().split('\n').filter(Boolean);
  const entries = lines.map((line) => {
    try {
      return JSON.parse(line) as Record<string, unknown>;
    } catch {
      throw new Error(`not a JSON line: ${line}`);
    }
  });
  // (typeof, not toMatchObject with expect.any: Bun's writes the matchers into the object it checks.)
  for (const entry of entries)
    expect([typeof entry.level, typeof entry.time, typeof entry.msg]).toEqual(['number', 'number', 'string']);

  // The access log: one line per request, with its id, route template and account.
  const access = entries.filter((e) => e.msg === 'request');
  expect(access).toEqual(
    expect.arrayContaining([
      expect.objectContaining({
        method: 'POST',
        route: '/v1/identities',
        path: '/v1/identities',
        status: 200,
        account_id: account.account_id,
        request_id: expect.stringMatching(/^req_/),
        duration_ms: expect.any(Number),
      }),
    ]),
  );
  expect(access).toEqual(
    expect.arrayContaining([expect.objectContaining({ method: 'GET', route: '/v1/identities', status: 401 })]),
  );
  expect(access).toEqual(
    expect.arrayContaining([expect.objectContaining({ path: '/rtc', status: expect.any(Number) })]),
  );
  expect(entries).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ msg: 'identity ready', identity_id: identityId, account_id: account.account_id }),
    ]),
  );

  // grep ses_…: the API's lines and the job's (another process) carry the session's id.
  const ofSession = lines
    .filter((line) => line.includes(session.room_name))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(ofSession).toEqual(
    expect.arrayContaining([
      expect.objectContaining({
        msg: 'session started',
        session_id: session.room_name,
        account_id: account.account_id,
        identity_id: identityId,
      }),
    ]),
  );
  expect(ofSession).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ msg: 'session ended', session_id: session.room_name, reason: 'ended_by_api' }),
    ]),
  );
  const fromJob = ofSession.filter(
    (e) => typeof e.pid === 'number' && e.pid !== child.pid && e.session_id === session.room_name,
  );
  expect(fromJob.map((e) => e.msg)).toEqual(
    expect.arrayContaining([expect.stringContaining('conversation providers')]),
  );

  // No secret anywhere the service printed.
  const printed = stdout.text() + stderr.text();
  for (const secret of [
    account.api_key,
    consoleKey,
    adminToken,
    PASSWORD,
    cookie.split('=')[1]!,
    session.token,
    'lk_notakeynotakeynotakeynotakeynotakeynotakey1',
  ]) {
    expect(printed.includes(secret) ? secret.slice(0, 12) : 'absent').toBe('absent');
  }
}, 180_000);
