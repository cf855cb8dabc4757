// /readyz stays cheap under load (docs/api.md#health): each check's answer stands for a moment,
// so a burst of probes costs each dependency one call; a failing check names itself.
import { expect, test } from 'bun:test';
import { Readiness } from '../../src/health/index.ts';

test('a burst of 50 readiness probes runs each check once; a failure is reported by name', async () => {
  let calls = 0;
  const readiness = new Readiness({
    database: async () => void calls++,
    livekit: async () => {
      throw new Error('LiveKit answered 503');
    },
  });
  const results = await Promise.all(Array.from({ length: 50 }, () => readiness.results()));
  expect(calls).toBe(1);
  expect(results.every((r) => r.database === 'ok' && r.livekit === 'LiveKit answered 503')).toBe(true);
});

test('after its moment, a check runs again: a recovered dependency is seen', async () => {
  let healthy = false;
  const readiness = new Readiness({
    livekit: async () => {
      if (!healthy) throw new Error('down');
    },
  });
  const start = performance.now();
  expect(await readiness.results(start)).toEqual({ livekit: 'down' });
  healthy = true;
  expect(await readiness.results(start + 1_000)).toEqual({ livekit: 'down' });
  expect(await readiness.results(start + 2_500)).toEqual({ livekit: 'ok' });
});
