// Training upgrades (docs/api.md#identities-training-upgrades): identities trained by an older
// version of their pipeline's training are trained again from their stored photo by the sweep,
// in the background, while they stay `ready` and their sessions use the old training; free,
// silent, one at a time, never while a create trains; a failure keeps the old training and is
// retried; two processes on one Postgres never upgrade the same identity twice.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq, sql } from 'drizzle-orm';
import { creditLedger } from '../../src/credits/schema.ts';
import { identities } from '../../src/identities/schema.ts';
import { trainingUpgrades } from '../../src/identities/training-upgrades-schema.ts';
import { trainingUpgrades as upgradesCounted } from '../../src/metrics/index.ts';
import { builtinTraining, TRAINING_VERSION } from '../../src/pipelines/builtin/index.ts';
import { PipelineRegistry } from '../../src/pipelines/registry.ts';
import type { Pipeline } from '../../src/pipelines/types.ts';
import { webhookDeliveries } from '../../src/webhooks/schema.ts';
import * as fx from '../fixtures/index.ts';
import { file, form, type IdentityBody, identityForm } from '../support/forms.ts';
import { dispatchedTo } from '../support/job-session.ts';
import { ENGINES, startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { eventually } from '../support/visitor.ts';
import { addWebhook } from '../support/webhooks.ts';

/** The built-in pipeline, whose trainings a test can hold mid-way and count. */
function gatedPipeline() {
  const gate = { hold: false, held: [] as (() => void)[], calls: [] as string[], active: 0, mostAtOnce: 0 };
  const pipeline: Pipeline = {
    ...builtinTraining,
    async train(input) {
      gate.calls.push(input.identityId);
      gate.active++;
      gate.mostAtOnce = Math.max(gate.mostAtOnce, gate.active);
      try {
        if (gate.hold) await new Promise<void>((resolve) => gate.held.push(resolve));
        return await builtinTraining.train(input);
      } finally {
        gate.active--;
      }
    },
  };
  return { gate, registry: new PipelineRegistry([pipeline], builtinTraining.id) };
}

const release = (gate: { held: (() => void)[] }) => {
  for (const resolve of gate.held.splice(0)) resolve();
};

const ENV = {
  // The tests sweep by hand: the periodic sweep would race them.
  SESSION_SWEEP_INTERVAL_SECONDS: '3600',
  TRAINING_UPGRADES_RETRY_SECONDS: '1',
  TRAINING_UPGRADES_KEEP_OLD_SECONDS: '3600',
  WEBHOOKS_ALLOW_PRIVATE: 'true',
};

async function rowOf(service: TestService, id: string) {
  const [row] = await service.services.database.db.select().from(identities).where(eq(identities.id, id));
  return row!;
}

/** Makes an identity's training look as an older version of the pipeline made it. */
async function age(service: TestService, id: string): Promise<void> {
  await service.services.database.db
    .update(identities)
    .set({ training: sql`jsonb_set(${identities.training}, '{version}', to_jsonb(${TRAINING_VERSION - 1}::int))` })
    .where(eq(identities.id, id));
}

async function create(account: TestAccount): Promise<IdentityBody> {
  const created = await account.call('POST', '/v1/identities', { body: await identityForm({ language: 'en' }) });
  expect(created.status).toBe(200);
  return (await created.json()) as IdentityBody;
}

const assetKeys = (training: Record<string, unknown> | null) =>
  Object.values((training?.assets ?? {}) as Record<string, string>).sort();

describe.each(ENGINES)('training upgrades (%s)', (engine) => {
  let service: TestService;
  let gate: ReturnType<typeof gatedPipeline>['gate'];
  beforeAll(async () => {
    const gated = gatedPipeline();
    gate = gated.gate;
    service = await startTestService(engine, { livekit: 'local', env: ENV, overrides: { pipelines: gated.registry } });
  });
  afterAll(() => {
    // A test that failed mid-way may leave a training held; shutdown waits for it.
    gate.hold = false;
    release(gate);
    return service.stop();
  });

  test('a stale identity is trained again in place: ready throughout, free, silent; a session meanwhile gets the old training', async () => {
    const account = await service.account({ credits: 1000 });
    const identity = await create(account);
    // Subscribed to every identity event (its deliveries are written whether or not they arrive).
    await addWebhook(account, {
      url: 'http://127.0.0.1:9/hook',
      events: ['identity.ready', 'identity.training_failed'],
    });
    await age(service, identity.identity_id);
    const old = await rowOf(service, identity.identity_id);
    const db = service.services.database.db;
    const ledger = await db.select().from(creditLedger).where(eq(creditLedger.accountId, account.accountId));
    const balance = ((await (await account.call('GET', '/v1/credits')).json()) as { balance: number }).balance;

    gate.hold = true;
    const swept = await service.services.trainingUpgrades.sweep();
    expect(swept).toEqual({ started: [identity.identity_id], deferred: false });
    await eventually(() => gate.held.length === 1, 20_000, 'the upgrade training');
    const status = (await (await account.call('GET', `/v1/identities/${identity.identity_id}`)).json()) as IdentityBody;
    expect(status).toMatchObject({ status: 'ready', detail: null });

    // A session started now is dispatched with the old training's files.
    const started = await account.call('POST', '/v1/sessions/start', {
      body: JSON.stringify({ identity_id: identity.identity_id }),
      headers: { 'content-type': 'application/json' },
    });
    expect(started.status, await started.clone().text()).toBe(200);
    const { room_name } = (await started.json()) as { room_name: string };
    const dispatched = ((await dispatchedTo(service, room_name)).identity as { assets: Record<string, string> }).assets;
    const dispatchedKeys = Object.values(dispatched)
      .map((url) => new URL(url).pathname.replace(/^\/assets\//, ''))
      .sort();
    expect(dispatchedKeys).toEqual(assetKeys(old.training));

    gate.hold = false;
    release(gate);
    await service.services.trainingUpgrades.idle();

    const upgraded = await rowOf(service, identity.identity_id);
    expect(upgraded.training?.version).toBe(TRAINING_VERSION);
    expect(upgraded.status).toBe('ready');
    expect(upgraded.detail).toBeNull();
    expect(assetKeys(upgraded.training)).not.toEqual(assetKeys(old.training));
    expect(upgraded.image.key).not.toBe(old.image.key);
    // Neither the account's view of change, nor the voice, nor its money, nor its webhooks.
    expect(upgraded.updatedAt.getTime()).toBe(old.updatedAt.getTime());
    expect(upgraded.audio).toEqual(old.audio);
    expect(upgraded.voice).toEqual(old.voice);
    // The ledger gained the session's hold started above, and nothing else; the balance moved by that alone.
    const entries = await db.select().from(creditLedger).where(eq(creditLedger.accountId, account.accountId));
    const added = entries.filter((entry) => !ledger.some((before) => before.id === entry.id));
    expect(added.map((entry) => entry.reference)).toEqual([`session:${room_name}:hold`]);
    expect(((await (await account.call('GET', '/v1/credits')).json()) as { balance: number }).balance).toBe(
      balance + added[0]!.amount,
    );
    expect(await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.accountId, account.accountId))).toEqual(
      [],
    );

    // The session dispatched before still downloads the old files (its agent fetches them at its start)...
    for (const url of Object.values(dispatched)) expect((await fetch(url)).status).toBe(200);
    // ...and the next one gets the new training.
    const next = (await (
      await account.call('POST', '/v1/sessions/start', {
        body: JSON.stringify({ identity_id: identity.identity_id }),
        headers: { 'content-type': 'application/json' },
      })
    ).json()) as { room_name: string };
    const nextAssets = ((await dispatchedTo(service, next.room_name)).identity as { assets: Record<string, string> })
      .assets;
    const nextKeys = Object.values(nextAssets)
      .map((url) => new URL(url).pathname.replace(/^\/assets\//, ''))
      .sort();
    expect(nextKeys).toEqual(assetKeys(upgraded.training));
    for (const room of [room_name, next.room_name]) await account.call('POST', `/v1/sessions/${room}/end`);

    // Nothing is stale now; once their time is up, the old files go.
    expect((await service.services.trainingUpgrades.sweep()).started).toEqual([]);
    const stored = await service.assetKeys();
    for (const key of assetKeys(old.training)) expect(stored).toContain(key);
    await db
      .update(trainingUpgrades)
      .set({ retireAfter: sql`now() - interval '1 second'` })
      .where(eq(trainingUpgrades.identityId, identity.identity_id));
    await service.services.trainingUpgrades.sweep();
    const after = await service.assetKeys();
    for (const key of [old.image.key, ...assetKeys(old.training)]) expect(after).not.toContain(key);
    for (const key of [upgraded.image.key, ...assetKeys(upgraded.training)]) expect(after).toContain(key);
  }, 90_000);

  test('two stale identities are upgraded one at a time, and none starts while a create trains', async () => {
    const account = await service.account({ credits: 1000 });
    const [a, b] = [await create(account), await create(account)];
    await age(service, a.identity_id);
    await age(service, b.identity_id);
    const upgrades = service.services.trainingUpgrades;

    // A create training: upgrades wait for it.
    gate.hold = true;
    gate.calls.length = 0;
    gate.mostAtOnce = 0;
    const creating = create(account);
    await eventually(() => gate.held.length === 1, 20_000, 'the create training');
    expect(await upgrades.sweep()).toEqual({ started: [], deferred: true });
    release(gate);
    await creating;

    const first = await upgrades.sweep();
    expect(first.started).toHaveLength(1);
    await eventually(() => gate.held.length === 1, 20_000, 'the first upgrade training');
    // The limit (1) is taken: the second waits.
    expect((await upgrades.sweep()).started).toEqual([]);
    release(gate);
    await upgrades.idle();
    const second = await upgrades.sweep();
    expect(second.started).toHaveLength(1);
    expect(second.started[0]).not.toBe(first.started[0]);
    await eventually(() => gate.held.length === 1, 20_000, 'the second upgrade training');
    gate.hold = false;
    release(gate);
    await upgrades.idle();

    expect([...first.started, ...second.started].sort()).toEqual([a.identity_id, b.identity_id].sort());
    expect(gate.mostAtOnce).toBe(1);
    for (const id of [a.identity_id, b.identity_id])
      expect((await rowOf(service, id)).training?.version).toBe(TRAINING_VERSION);
  }, 90_000);

  test('a retrain accepted during an upgrade wins: the upgrade is dropped with its files', async () => {
    const account = await service.account({ credits: 1000 });
    const identity = await create(account);
    await age(service, identity.identity_id);
    const upgrades = service.services.trainingUpgrades;
    gate.hold = true;
    expect((await upgrades.sweep()).started).toEqual([identity.identity_id]);
    await eventually(() => gate.held.length === 1, 20_000, 'the upgrade training');
    const patched = await account.call('PATCH', `/v1/identities/${identity.identity_id}`, {
      body: form({ prompt: 'retrained meanwhile', image: file(fx.portraitPng(), 'new.png') }),
    });
    expect(patched.status).toBe(202);
    await eventually(() => gate.held.length === 2, 20_000, 'the retrain training');
    gate.hold = false;
    release(gate);
    await upgrades.idle();
    await service.services.retraining.idle();

    const row = await rowOf(service, identity.identity_id);
    expect(row).toMatchObject({ status: 'ready', detail: null, prompt: 'retrained meanwhile' });
    expect(row.training?.version).toBe(TRAINING_VERSION);
    // Only the retrain's training is stored: the upgrade's folder went with it.
    const stored = (await service.assetKeys()).filter((key) => key.startsWith(`identities/${identity.identity_id}/`));
    expect(stored.sort()).toEqual(
      [row.image.key, ...Object.values(row.image.variants).map((v) => v.key), ...assetKeys(row.training)].sort(),
    );
    const [state] = await service.services.database.db
      .select()
      .from(trainingUpgrades)
      .where(eq(trainingUpgrades.identityId, identity.identity_id));
    expect(state).toMatchObject({ prefix: null, workedUntil: null, attempts: 0, upgradedToVersion: null });
  }, 60_000);

  test('an upgrade whose process died is taken up again once its lease runs out, and its folder is deleted', async () => {
    const account = await service.account({ credits: 1000 });
    const identity = await create(account);
    await age(service, identity.identity_id);
    const db = service.services.database.db;
    const left = `identities/${identity.identity_id}/leftbyadeadprocess/`;
    await service.services.store.put(`${left}portrait.jpg`, new Uint8Array([1, 2, 3]), 'image/jpeg');
    // A live lease: nobody takes it.
    await db.insert(trainingUpgrades).values({
      identityId: identity.identity_id,
      prefix: left,
      workedUntil: sql`now() + interval '1 hour'`,
    });
    const upgrades = service.services.trainingUpgrades;
    expect((await upgrades.sweep()).started).toEqual([]);
    // Its lease ran out (the process died): the next sweep takes it.
    await db
      .update(trainingUpgrades)
      .set({ workedUntil: sql`now() - interval '1 second'` })
      .where(eq(trainingUpgrades.identityId, identity.identity_id));
    expect((await upgrades.sweep()).started).toEqual([identity.identity_id]);
    await upgrades.idle();
    expect((await rowOf(service, identity.identity_id)).training?.version).toBe(TRAINING_VERSION);
    expect((await service.assetKeys()).filter((key) => key.startsWith(left))).toEqual([]);
  }, 60_000);

  test('a failing upgrade keeps the old training and the identity ready, and is tried again later', async () => {
    const account = await service.account({ credits: 1000 });
    const identity = await create(account);
    await age(service, identity.identity_id);
    const old = await rowOf(service, identity.identity_id);
    const photo = new Uint8Array(await (await service.services.store.get(old.image.key))!.arrayBuffer());
    await service.services.store.delete(old.image.key);
    const upgrades = service.services.trainingUpgrades;
    const counted = async (outcome: string) =>
      (await upgradesCounted.get()).values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
    const [failedBefore, upgradedBefore] = [await counted('failed'), await counted('upgraded')];
    const state = async () =>
      (
        await service.services.database.db
          .select()
          .from(trainingUpgrades)
          .where(eq(trainingUpgrades.identityId, identity.identity_id))
      )[0]!;

    expect((await upgrades.sweep()).started).toEqual([identity.identity_id]);
    await upgrades.idle();
    expect(await state()).toMatchObject({ attempts: 1, workedUntil: null });
    expect((await state()).lastError).toContain('missing');
    const kept = await rowOf(service, identity.identity_id);
    expect(kept).toMatchObject({ status: 'ready', detail: null, training: old.training, image: old.image });
    const read = (await (await account.call('GET', `/v1/identities/${identity.identity_id}`)).json()) as IdentityBody;
    expect(read).toMatchObject({ status: 'ready', detail: null });

    // Not again before its backoff (1 s, then 2 s)...
    expect((await upgrades.sweep()).started).toEqual([]);
    await Bun.sleep(1_200);
    expect((await upgrades.sweep()).started).toEqual([identity.identity_id]);
    await upgrades.idle();
    expect((await state()).attempts).toBe(2);

    // ...and once the photo is back, the next try succeeds.
    await service.services.store.put(old.image.key, photo, old.image.contentType);
    await Bun.sleep(2_200);
    expect((await upgrades.sweep()).started).toEqual([identity.identity_id]);
    await upgrades.idle();
    expect(await state()).toMatchObject({ attempts: 0, lastError: null, upgradedToVersion: TRAINING_VERSION });
    expect((await rowOf(service, identity.identity_id)).training?.version).toBe(TRAINING_VERSION);
    expect([(await counted('failed')) - failedBefore, (await counted('upgraded')) - upgradedBefore]).toEqual([2, 1]);
  }, 60_000);
});

test('two API processes on one Postgres: each stale identity is upgraded once, one at a time fleet-wide', async () => {
  const one = gatedPipeline();
  const first = await startTestService('postgres', { env: ENV, overrides: { pipelines: one.registry } });
  const two = gatedPipeline();
  const second = await startTestService('postgres', {
    env: ENV,
    databaseUrl: first.config.databaseUrl,
    dataDir: first.dataDir,
    overrides: { pipelines: two.registry },
  });
  try {
    const account = await first.account({ credits: 1000 });
    const made = [await create(account), await create(account)].map((i) => i.identity_id);
    for (const id of made) await age(first, id);
    one.gate.calls.length = 0;
    one.gate.hold = two.gate.hold = true;

    const both = await Promise.all([first.services.trainingUpgrades.sweep(), second.services.trainingUpgrades.sweep()]);
    expect(both.flatMap((s) => s.started)).toHaveLength(1);
    await eventually(() => one.gate.held.length + two.gate.held.length === 1, 20_000, 'one upgrade training');
    expect((await second.services.trainingUpgrades.sweep()).started).toEqual([]);
    expect((await first.services.trainingUpgrades.sweep()).started).toEqual([]);
    one.gate.hold = two.gate.hold = false;
    release(one.gate);
    release(two.gate);
    await Promise.all([first.services.trainingUpgrades.idle(), second.services.trainingUpgrades.idle()]);

    const again = await Promise.all([
      first.services.trainingUpgrades.sweep(),
      second.services.trainingUpgrades.sweep(),
    ]);
    await Promise.all([first.services.trainingUpgrades.idle(), second.services.trainingUpgrades.idle()]);
    const started = [...both, ...again].flatMap((s) => s.started);
    expect(started.sort()).toEqual([...made].sort());
    expect([...one.gate.calls, ...two.gate.calls].sort()).toEqual([...made].sort());
    for (const id of made) expect((await rowOf(first, id)).training?.version).toBe(TRAINING_VERSION);
    const last = await Promise.all([first.services.trainingUpgrades.sweep(), second.services.trainingUpgrades.sweep()]);
    expect(last.flatMap((s) => s.started)).toEqual([]);
  } finally {
    await second.stopKeepingData();
    await first.stop();
  }
}, 90_000);

test('the periodic sweep upgrades a stale identity by itself, ready all along; TRAINING_UPGRADES_CONCURRENT=0 turns it off', async () => {
  const off = await startTestService('pglite', { env: { ...ENV, TRAINING_UPGRADES_CONCURRENT: '0' } });
  try {
    const account = await off.account();
    const identity = await create(account);
    await age(off, identity.identity_id);
    expect(await off.services.trainingUpgrades.sweep()).toEqual({ started: [], deferred: false });
    expect((await rowOf(off, identity.identity_id)).training?.version).toBe(TRAINING_VERSION - 1);
  } finally {
    await off.stop();
  }

  const service = await startTestService('pglite', { env: { ...ENV, SESSION_SWEEP_INTERVAL_SECONDS: '1' } });
  try {
    const account = await service.account();
    const identity = await create(account);
    await age(service, identity.identity_id);
    const seen = new Set<string>();
    await eventually(
      async () => {
        const read = (await (await account.call('GET', `/v1/identities/${identity.identity_id}/status`)).json()) as {
          status: string;
        };
        seen.add(read.status);
        return (await rowOf(service, identity.identity_id)).training?.version === TRAINING_VERSION;
      },
      30_000,
      'the upgrade by the periodic sweep',
    );
    expect([...seen]).toEqual(['ready']);
  } finally {
    await service.stop();
  }
}, 90_000);
