// bench/soak: the service under a long, ordinary load (issue 16), to see that nothing grows:
// sessions started, joined briefly by a real visitor and ended, one after another; identities
// created and deleted; and every --burst-every sessions a burst of starts nobody joins (a
// fuzzer's), ended a moment later. The service runs as `likeness serve` (API and agent worker,
// `--role all`) in its own process, so its figures are its own: the visitors run here. At the
// start and the end (and every --every seconds) it prints, for the service process, each job
// process, the inference process and LiveKit: RSS and open file descriptors; and the warnings
// the service printed (MaxListenersExceededWarning among them). They must stay flat.
//   LIKENESS_LIVEKIT_BIN=$(ls ~/.cache/likeness/livekit-server-*/livekit-server) \
//     bun bench/soak/index.ts [--minutes 30] [--every 60] [--burst-every 25] [--burst 12]
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startProviderFakes } from '../../test/support/fakes/index.ts';
import { identityForm } from '../../test/support/forms.ts';
import { collectOutput } from '../../test/support/processes.ts';
import { eventually, joinAsVisitor } from '../../test/support/visitor.ts';
import { benchAccount } from '../support/index.ts';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '30' },
    every: { type: 'string', default: '60' },
    'burst-every': { type: 'string', default: '25' },
    burst: { type: 'string', default: '12' },
  },
});
const fakes = await startProviderFakes();

/** Warnings in what the service printed, by name (`(node:pid) MaxListenersExceededWarning: …`). */
function warningsIn(printed: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const [, name] of printed.matchAll(/\b(\w+Warning)\b/g)) counts[name!] = (counts[name!] ?? 0) + 1;
  return counts;
}

interface ProcessSample {
  pid: number;
  what: string;
  rssMb: number;
  fds: number;
}

/** The service process and its children: job processes, the inference process, LiveKit. */
async function sample(servicePid: number): Promise<ProcessSample[]> {
  const of = async (pid: number, what: string): Promise<ProcessSample | undefined> => {
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024;
    const fds = (await readdir(`/proc/${pid}/fd`).catch(() => [])).length;
    return Number.isFinite(rss) ? { pid, what, rssMb: Math.round(rss), fds } : undefined;
  };
  const found = [await of(servicePid, 'service')];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== servicePid) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    const what = cmdline.includes('job_proc')
      ? 'job'
      : cmdline.includes('inference_proc')
        ? 'inference'
        : cmdline.includes('livekit-server')
          ? 'livekit'
          : 'child';
    found.push(await of(Number(entry), what));
  }
  return found.filter((s): s is ProcessSample => s !== undefined);
}

function print(
  label: string,
  samples: ProcessSample[],
  counts: { sessions: number; burst: number; identities: number },
  printed: string,
) {
  const by = (what: string) => samples.filter((s) => s.what === what);
  const line = (what: string) => {
    const list = by(what);
    if (!list.length) return `${what}: none`;
    return `${what}×${list.length}: RSS ${list.map((s) => s.rssMb).join('/')} MB, fds ${list.map((s) => s.fds).join('/')}`;
  };
  console.log(
    `[${label}] sessions ${counts.sessions} (+${counts.burst} never joined), identities ${counts.identities}; ${line('service')}; ${line('job')}; ${line('inference')}; ${line('livekit')}; warnings ${JSON.stringify(warningsIn(printed))}`,
  );
}

const dataDir = await mkdtemp(join(tmpdir(), 'likeness-soak-'));
const port = String(20_000 + Math.floor(Math.random() * 20_000));
const serviceUrl = `http://127.0.0.1:${port}`;
const child = Bun.spawn([process.execPath, join(import.meta.dir, '../../src/cli/index.ts'), 'serve'], {
  env: {
    ...process.env,
    ...fakes.env,
    HOST: '127.0.0.1',
    PORT: port,
    DATA_DIR: dataDir,
    CREDITS_ONBOARDING: '0',
    // Its warnings still print (on stderr); the access log of every request would only pile up here.
    LOG_LEVEL: 'warn',
    LIMIT_SESSION_STARTS_PER_MINUTE: '0',
    LIMIT_CONCURRENT_SESSIONS: '0',
    LIMIT_IDENTITY_CREATES_PER_HOUR: '0',
    SESSION_RESERVED_PERCENT: '0',
  },
  stdin: 'ignore',
  stdout: 'pipe',
  stderr: 'pipe',
});
try {
  const stdout = collectOutput(child.stdout);
  const stderr = collectOutput(child.stderr);
  const printed = () => stdout.text() + stderr.text();
  await eventually(
    async () => (await fetch(`${serviceUrl}/readyz`).catch(() => undefined))?.status === 200,
    120_000,
    'ready',
  );
  const adminToken = (await Bun.file(join(dataDir, 'admin-token')).text()).trim();
  const account = (await (
    await fetch(`${serviceUrl}/internal/admin/accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'soak@example.com', credits: 100_000_000 }),
    })
  ).json()) as { api_key: string };
  const { authorization, post, createIdentity } = benchAccount(serviceUrl, account.api_key);
  const auth = { authorization };
  const identityId = await createIdentity();
  const start = () => post('/v1/sessions/start', { identity_id: identityId });
  const end = (room: string) => post(`/v1/sessions/${room}/end`);
  const counts = { sessions: 0, burst: 0, identities: 0 };
  const began = performance.now();
  const until = began + Number(values.minutes) * 60_000;
  let nextSample = 0;
  while (performance.now() < until) {
    if (performance.now() >= nextSample) {
      print(`${Math.round((performance.now() - began) / 1000)} s`, await sample(child.pid), counts, printed());
      nextSample = performance.now() + Number(values.every) * 1000;
    }
    // A session joined briefly: the visitor sees the agent, stays two seconds, the API ends it.
    const started = await start();
    if (started.status !== 200) {
      await Bun.sleep(1_000); // every agent busy (a session still closing): try again
      continue;
    }
    const session = (await started.json()) as { room_name: string; token: string; rtc_url: string };
    const visitor = await joinAsVisitor(session);
    await eventually(() => visitor.agent(), 20_000, 'the agent').catch(() => undefined);
    await Bun.sleep(2_000);
    await end(session.room_name);
    await visitor.leave().catch(() => undefined);
    counts.sessions++;
    // Every third session: an identity created and deleted.
    if (counts.sessions % 3 === 0) {
      const made = (await (
        await fetch(`${serviceUrl}/v1/identities`, {
          method: 'POST',
          headers: auth,
          body: await identityForm({ language: 'en' }),
        })
      ).json()) as { identity_id: string };
      await fetch(`${serviceUrl}/v1/identities/${made.identity_id}`, { method: 'DELETE', headers: auth });
      counts.identities++;
    }
    // A burst of starts nobody joins, all at once, ended a second later (what a fuzzer does).
    if (counts.sessions % Number(values['burst-every']) === 0) {
      const burst = await Promise.all(Array.from({ length: Number(values.burst) }, start));
      const rooms = await Promise.all(
        burst.filter((r) => r.status === 200).map(async (r) => ((await r.json()) as { room_name: string }).room_name),
      );
      await Bun.sleep(1_000);
      await Promise.all(rooms.map(end));
      counts.burst += rooms.length;
    }
  }
  print('end', await sample(child.pid), counts, printed());
} finally {
  child.kill('SIGTERM');
  await Promise.race([child.exited, Bun.sleep(30_000)]);
  child.kill('SIGKILL');
  await fakes.stop();
  await rm(dataDir, { recursive: true, force: true });
}
// The visitors' rtc-node handles would keep the process alive.
process.exit(0);
