// Agent job processes run third-party plugins and models (issue 16): they get an environment
// without the control plane's secrets, even when the worker runs in the API's process and
// holds them. Read from the live job processes' own /proc/<pid>/environ, as anything running
// in them could. agents forks them, and its inference process, with a patch for it (hunks P2
// and P3 in agent/agents-adapter/index.ts).
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { readdir, readFile } from 'node:fs/promises';
import { CONTROL_PLANE_SECRETS, JOB_MODELS_IN_BACKGROUND_VARIABLE } from '../../src/config.ts';
import { setProcessEnv } from '../support/environment.ts';
import { sharedProviderFakes } from '../support/preload.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { eventually } from '../support/visitor.ts';

const fakes = sharedProviderFakes();
let service: TestService;
let restoreEnv = () => {};

beforeAll(async () => {
  // As a `--role all` process holds them.
  restoreEnv = setProcessEnv(
    Object.fromEntries(CONTROL_PLANE_SECRETS.map((name) => [name, `secret-${name.toLowerCase()}`])),
  );
  service = await startTestService('pglite', { livekit: 'local', agent: true, env: fakes.env });
});
afterAll(async () => {
  await service?.stop();
  restoreEnv();
});

/** This process's children that are agent job processes (or agents' inference process), with their environment. */
async function jobProcesses(kind = 'job_proc_lazy_main'): Promise<Array<{ pid: number; env: Map<string, string> }>> {
  const found = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (parent !== process.pid) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (!cmdline.includes(kind)) continue;
    const environ = await readFile(`/proc/${entry}/environ`, 'utf8').catch(() => '');
    found.push({
      pid: Number(entry),
      env: new Map(
        environ
          .split('\0')
          .filter(Boolean)
          .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)] as [string, string]),
      ),
    });
  }
  return found;
}

test('job processes have no database URL, storage secret or admin token; they keep what they need', async () => {
  expect(process.env.ADMIN_TOKEN).toBe('secret-admin_token'); // the worker's own environment has them
  const jobs = await eventually(
    async () => ((await jobProcesses()).length > 0 ? jobProcesses() : undefined),
    30_000,
    'warm job processes',
  );
  for (const job of jobs) {
    for (const name of CONTROL_PLANE_SECRETS)
      expect([job.pid, name, job.env.has(name)]).toEqual([job.pid, name, false]);
    expect(job.env.get('PATH')).toBe(process.env.PATH!);
    // The providers' settings stay (the wire fakes' URLs here).
    for (const [name, value] of Object.entries(fakes.env)) expect(job.env.get(name)).toBe(value);
  }
}, 60_000);

/** agents' inference process of this process's worker, once it runs. */
const theInferenceProcess = () =>
  eventually(async () => (await jobProcesses('inference_proc_lazy_main'))[0], 30_000, 'the inference process');

test("agents' inference process (the end-of-turn model) has none of them either", async () => {
  const inference = await theInferenceProcess();
  for (const name of CONTROL_PLANE_SECRETS)
    expect([inference.pid, name, inference.env.has(name)]).toEqual([inference.pid, name, false]);
  expect(inference.env.get('PATH')).toBe(process.env.PATH!);
}, 60_000);

test("the worker's first job processes load their models before taking a job; once they are warm, replacements are told to load them behind the face", async () => {
  const first = await eventually(
    async () => ((await jobProcesses()).length > 0 ? jobProcesses() : undefined),
    30_000,
    'warm job processes',
  );
  for (const job of first) expect([job.pid, job.env.has(JOB_MODELS_IN_BACKGROUND_VARIABLE)]).toEqual([job.pid, false]);
  // Forks copy the environment: the worker sets the variable in its own once every slot has a warm process.
  await eventually(
    async () => (process.env[JOB_MODELS_IN_BACKGROUND_VARIABLE] === '1' ? true : undefined),
    30_000,
    'the worker to mark its later forks',
  );
}, 60_000);

/** Whether the process maps a language model file (node-llama-cpp maps the GGUF it loads). */
async function mapsLanguageModel(pid: number): Promise<boolean> {
  return (await readFile(`/proc/${pid}/maps`, 'utf8').catch(() => '')).includes('.gguf');
}

test('with cloud replies, SmolLM2 reads sentences in the inference process, loaded once per worker, and in no job process', async () => {
  // Warm job processes have finished their prewarm once the worker marks its later forks (above).
  await eventually(
    async () => (process.env[JOB_MODELS_IN_BACKGROUND_VARIABLE] === '1' ? true : undefined),
    30_000,
    'the job processes warm',
  );
  const inference = await theInferenceProcess();
  expect(await mapsLanguageModel(inference.pid)).toBe(true);
  const jobs = await jobProcesses();
  expect(jobs.length).toBeGreaterThan(0);
  for (const job of jobs) expect([job.pid, await mapsLanguageModel(job.pid)]).toEqual([job.pid, false]);
}, 60_000);
