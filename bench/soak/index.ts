// bench/soak: the service under a long, ordinary load (issue 16), to see that nothing grows:
// sessions started, joined briefly by a real visitor and ended, one after another, and
// identities created and deleted, for --minutes (30 for the record; less to try it). At the
// start and the end (and every --every seconds) it prints, for the service's process (API and
// agent worker, `--role all`) and each job process: RSS, open file descriptors; and the
// process warnings seen (MaxListenersExceededWarning among them). They must stay flat.
//   LIKENESS_LIVEKIT_BIN=$(ls ~/.cache/likeness/livekit-server-*/livekit-server) \
//     bun bench/soak/index.ts [--minutes 30] [--every 60] [--providers fakes|offline]
import { readdir, readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { startProviderFakes } from '../../test/support/fakes/index.ts';
import { identityForm } from '../../test/support/forms.ts';
import { eventually, joinAsVisitor } from '../../test/support/visitor.ts';
import { startBenchService } from '../support/index.ts';

const { values } = parseArgs({ options: { minutes: { type: 'string', default: '30' }, every: { type: 'string', default: '60' }, providers: { type: 'string', default: 'fakes' } } });
if (values.providers === 'fakes') Object.assign(process.env, (await startProviderFakes()).env);

const warnings = new Map<string, number>();
process.on('warning', (warning) => warnings.set(warning.name, (warnings.get(warning.name) ?? 0) + 1));

interface ProcessSample {
  pid: number;
  what: string;
  rssMb: number;
  fds: number;
}

/** This process and its job processes (children running agents' job main). */
async function sample(): Promise<ProcessSample[]> {
  const of = async (pid: number, what: string): Promise<ProcessSample | undefined> => {
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024;
    const fds = (await readdir(`/proc/${pid}/fd`).catch(() => [])).length;
    return Number.isFinite(rss) ? { pid, what, rssMb: Math.round(rss), fds } : undefined;
  };
  const found = [await of(process.pid, 'service')];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== process.pid) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    const what = cmdline.includes('job_proc') ? 'job' : cmdline.includes('inference_proc') ? 'inference' : cmdline.includes('livekit-server') ? 'livekit' : 'child';
    found.push(await of(Number(entry), what));
  }
  return found.filter((s): s is ProcessSample => s !== undefined);
}

function print(label: string, samples: ProcessSample[], counts: { sessions: number; identities: number }) {
  const by = (what: string) => samples.filter((s) => s.what === what);
  const line = (what: string) => {
    const list = by(what);
    if (!list.length) return `${what}: none`;
    return `${what}×${list.length}: RSS ${list.map((s) => s.rssMb).join('/')} MB, fds ${list.map((s) => s.fds).join('/')}`;
  };
  const heap = process.memoryUsage();
  console.log(
    `[${label}] sessions ${counts.sessions}, identities ${counts.identities}; ${line('service')} (heap ${Math.round(heap.heapUsed / 1048576)} MB); ${line('job')}; ${line('inference')}; ${line('livekit')}; warnings ${JSON.stringify(Object.fromEntries(warnings))}`,
  );
}

const bench = await startBenchService({ agent: true, env: { CREDITS_ONBOARDING: '0', LIMIT_SESSION_STARTS_PER_MINUTE: '0', LIMIT_CONCURRENT_SESSIONS: '0', LIMIT_IDENTITY_CREATES_PER_HOUR: '0' } });
const { service } = bench;
try {
  const account = await service.services.operations.createAccount({ email: 'soak@example.com', credits: 100_000_000 });
  const auth = { authorization: `Bearer ${account.api_key}` };
  const json = { ...auth, 'content-type': 'application/json' };
  const identity = (await (await fetch(`${service.url}/v1/identities`, { method: 'POST', headers: auth, body: await identityForm({ language: 'en' }) })).json()) as { identity_id: string };
  const counts = { sessions: 0, identities: 0 };
  const until = performance.now() + Number(values.minutes) * 60_000;
  let nextSample = 0;
  while (performance.now() < until) {
    if (performance.now() >= nextSample) {
      print(`${Math.round((performance.now() - (until - Number(values.minutes) * 60_000)) / 1000)} s`, await sample(), counts);
      nextSample = performance.now() + Number(values.every) * 1000;
    }
    // A session joined briefly: the visitor sees the agent, stays two seconds, the API ends it.
    const started = await fetch(`${service.url}/v1/sessions/start`, { method: 'POST', headers: json, body: JSON.stringify({ identity_id: identity.identity_id }) });
    if (started.status !== 200) {
      await Bun.sleep(1_000); // every agent busy (a session still closing): try again
      continue;
    }
    const session = (await started.json()) as { room_name: string; token: string; rtc_url: string };
    const visitor = await joinAsVisitor(session);
    await eventually(() => visitor.agent(), 20_000, 'the agent').catch(() => undefined);
    await Bun.sleep(2_000);
    await fetch(`${service.url}/v1/sessions/${session.room_name}/end`, { method: 'POST', headers: auth });
    await visitor.leave().catch(() => undefined);
    counts.sessions++;
    // Every third session: an identity created and deleted.
    if (counts.sessions % 3 === 0) {
      const made = (await (await fetch(`${service.url}/v1/identities`, { method: 'POST', headers: auth, body: await identityForm({ language: 'en' }) })).json()) as { identity_id: string };
      await fetch(`${service.url}/v1/identities/${made.identity_id}`, { method: 'DELETE', headers: auth });
      counts.identities++;
    }
  }
  print('end', await sample(), counts);
} finally {
  await bench.stop();
}
