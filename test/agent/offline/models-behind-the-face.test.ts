// A job process forked while the worker is warm (replacing one whose session ended) takes a
// session before its offline models are loaded: its face streams at once and the conversation
// waits for the models. The worker's first processes still load them before taking a job, so
// readiness means loaded. The real job definition's prewarm, with the real models.
import { afterAll, afterEach, beforeAll, expect, test } from 'bun:test';
import { JOB_MODELS_IN_BACKGROUND_VARIABLE } from '../../../src/config.ts';
import { setProcessEnv } from '../../support/environment.ts';

/** What a no-key install lacks (the suites' preload points these at the wire fakes). */
const CLOUD_KEYS = ['DEEPGRAM_API_KEY', 'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'ELEVENLABS_API_KEY'];
const savedKeys = Object.fromEntries(CLOUD_KEYS.map((name) => [name, process.env[name]]));
beforeAll(() => {
  for (const name of CLOUD_KEYS) delete process.env[name];
});
afterAll(() => {
  for (const [name, value] of Object.entries(savedKeys)) if (value !== undefined) process.env[name] = value;
});

interface Loaded {
  close(): Promise<void>;
}
interface JobDefinition {
  prewarm(proc: { userData: Record<string, unknown> }): Promise<void>;
}

const job = (await import('../../../agent/job.ts')).default as unknown as JobDefinition;
let restore = () => {};
afterEach(() => restore());

/** Runs the job's prewarm; says whether its models were loaded the moment it returned. */
async function prewarm(): Promise<{ loadedOnReturn: boolean; models: Loaded | undefined }> {
  const proc = { userData: {} as Record<string, unknown> };
  await job.prewarm(proc);
  const offline = proc.userData.offline as Promise<Loaded | undefined>;
  const loadedOnReturn = await Promise.race([offline.then(() => true), Bun.sleep(0).then(() => false)]);
  return { loadedOnReturn, models: await offline };
}

test("a worker's first job processes load the offline models before they take a job", async () => {
  const saved = process.env[JOB_MODELS_IN_BACKGROUND_VARIABLE];
  delete process.env[JOB_MODELS_IN_BACKGROUND_VARIABLE];
  restore = () => {
    if (saved !== undefined) process.env[JOB_MODELS_IN_BACKGROUND_VARIABLE] = saved;
  };
  const { loadedOnReturn, models } = await prewarm();
  expect(loadedOnReturn).toBe(true);
  expect(models).toBeDefined();
  await models!.close();
}, 120_000);

test('a replacement process takes a job at once and loads the models behind it', async () => {
  restore = setProcessEnv({ [JOB_MODELS_IN_BACKGROUND_VARIABLE]: '1' });
  const { loadedOnReturn, models } = await prewarm();
  expect(loadedOnReturn).toBe(false);
  // …and the conversation gets them.
  expect(models).toBeDefined();
  await models!.close();
}, 120_000);
