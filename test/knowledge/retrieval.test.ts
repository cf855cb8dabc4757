// What a session's job retrieves each turn (POST /internal/sessions/{id}/knowledge; issue 33
// point 3), on both engines: PGlite searches with pgvector, Debian's Postgres (no pgvector)
// exactly in the process; either way a question only one document answers gets its passage,
// a Spanish question the English passage; retrieval never crosses accounts, skips documents
// not ready, deleted or embedded by another model, and stays under the similarity floor's
// bar; the latency lands in likeness_knowledge_retrieval_seconds.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import type { KnowledgeAnswer } from '../../src/contract/knowledge.ts';
import { OFFLINE_EMBEDDING_MODEL, searchCapabilities } from '../../src/knowledge/index.ts';
import { retrievalSeconds } from '../../src/knowledge/metrics.ts';
import { documents } from '../../src/knowledge/schema.ts';
import { sessions } from '../../src/sessions/schema.ts';
import { runningJobSession } from '../support/job-session.ts';
import { ENGINES, startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { pdfWithText, readyDocument } from './support.ts';

const CLINIC = [
  'Sunrise Dental Clinic opens at 9 am and closes at 1 pm on Saturdays. On Sundays the clinic is closed.',
  'Parking is free for patients in the underground garage under the building; take a ticket at the barrier.',
  'A standard teeth cleaning costs 80 euros. Most insurance plans cover one cleaning a year.',
].join('\n\n');
const SHOP = [
  'Returns are accepted within 30 days of delivery if the product is unused and in its original packaging.',
  'Shipping to Canada takes 7 to 10 business days and costs 25 dollars.',
].join('\n\n');
const VAULT = (code: string) =>
  `The combination of the Harbor Street storage vault is ${code}. Only managers may open it.`;

describe.each(ENGINES)('knowledge retrieval on %s', (engine) => {
  let service: TestService;
  let account: TestAccount;
  let other: TestAccount;
  let clinic: string;
  let shop: string;
  let vault: string;
  let otherVault: string;
  beforeAll(async () => {
    service = await startTestService(engine, { env: { SESSION_SWEEP_INTERVAL_SECONDS: '3600' } });
    [account, other] = [await service.account(), await service.account()];
    [clinic, shop, vault, otherVault] = (
      await Promise.all([
        readyDocument(account, CLINIC, 'clinic.md', 'Clinic'),
        readyDocument(account, pdfWithText(SHOP.split('\n\n')), 'shop.pdf', 'Shop'),
        readyDocument(account, VAULT('4417'), 'vault.txt', 'Vault'),
        readyDocument(other, VAULT('9921'), 'vault.txt', 'Vault'),
      ])
    ).map((d) => d.document_id) as [string, string, string, string];
  });
  afterAll(() => service?.stop());

  /** A running session of `owner` whose start fixed these documents, and its job's retrieval. */
  async function sessionWith(owner: TestAccount, documentIds: string[]) {
    const { id, token } = await runningJobSession(service, owner.accountId, { documentIds });
    const ask = async (query: string, bearer = token) =>
      fetch(`${service.url}/internal/sessions/${id}/knowledge`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      });
    const passagesFor = async (query: string) => {
      const answer = await ask(query);
      expect(answer.status).toBe(200);
      return ((await answer.json()) as KnowledgeAnswer).passages;
    };
    return { id, ask, passagesFor };
  }

  test(`the search path is ${engine === 'pglite' ? 'pgvector' : 'exact'}`, async () => {
    const { path } = await searchCapabilities(service.services.database.db);
    expect(path).toBe(engine === 'pglite' ? 'pgvector' : 'exact');
    const result = await service.services.knowledge.search({
      accountId: account.accountId,
      documentIds: [clinic],
      query: 'Is there parking?',
    });
    expect(result.path).toBe(path);
    expect(result.floor).toBe(0.8);
  });

  test('a question only one document answers retrieves its passage, best first, within the bounds', async () => {
    const session = await sessionWith(account, [clinic, shop, vault]);
    const before = (await retrievalSeconds.get()).values.find(
      (v) => v.metricName?.endsWith('_count') && v.labels.path === (engine === 'pglite' ? 'pgvector' : 'exact'),
    );
    const answer = await session.ask('How long does shipping to Canada take?');
    const body = (await answer.json()) as KnowledgeAnswer;
    expect(body.took_ms).toBeGreaterThanOrEqual(0);
    expect(body.passages[0]).toMatchObject({ document_id: shop, document_name: 'Shop' });
    expect(body.passages[0]!.text).toContain('7 to 10 business days');
    expect(body.passages[0]!.score).toBeGreaterThan(0.8);
    expect(body.passages.length).toBeLessThanOrEqual(3);
    const scores = body.passages.map((p) => p.score);
    expect(scores).toEqual(scores.toSorted((a, b) => b - a));
    expect(body.passages.reduce((sum, p) => sum + p.text.length, 0)).toBeLessThanOrEqual(2400);
    const parking = await session.passagesFor('Where can patients park their car?');
    expect(parking[0]!.document_id).toBe(clinic);
    expect(parking[0]!.text).toContain('underground garage');
    const after = (await retrievalSeconds.get()).values.find(
      (v) => v.metricName?.endsWith('_count') && v.labels.path === (engine === 'pglite' ? 'pgvector' : 'exact'),
    );
    expect((after?.value ?? 0) - (before?.value ?? 0)).toBe(2);
  });

  test('the offline embedder gives a Spanish question a high score to the English passage that answers it', async () => {
    const session = await sessionWith(account, [clinic, shop]);
    const [best] = await session.passagesFor('¿A qué hora abre la clínica los sábados?');
    expect(best).toMatchObject({ document_id: clinic, document_name: 'Clinic' });
    expect(best!.text).toContain('9 am');
    // Above the floor (0.8, measured: docs), and well above what an unrelated question scores on the same passage.
    expect(best!.score).toBeGreaterThan(0.8);
    const unrelated = await service.services.knowledge.search({
      accountId: account.accountId,
      documentIds: [clinic],
      query: 'What is the capital of Australia?',
      floor: -1,
    });
    expect(best!.score - unrelated.passages[0]!.score).toBeGreaterThan(0.05);
  });

  test('a question nothing answers gets no passage (the similarity floor)', async () => {
    const session = await sessionWith(account, [clinic, shop]);
    expect(await session.passagesFor('What is the capital of Australia?')).toEqual([]);
  });

  test('retrieval never crosses accounts, even for a document id put in the session', async () => {
    // Near-identical documents in two accounts; a session of each, and one of `account` that names the other's.
    const own = await sessionWith(account, [vault, otherVault]);
    const theirs = await sessionWith(other, [otherVault, vault]);
    const ours = await own.passagesFor('What is the combination of the storage vault?');
    expect(ours.map((p) => p.document_id)).toEqual([vault]);
    expect(ours[0]!.text).toContain('4417');
    const them = await theirs.passagesFor('What is the combination of the storage vault?');
    expect(them.map((p) => p.document_id)).toEqual([otherVault]);
    expect(them[0]!.text).toContain('9921');
    // A job's token opens its own session only.
    const answer = await fetch(`${service.url}/internal/sessions/${theirs.id}/knowledge`, {
      method: 'POST',
      headers: { authorization: 'Bearer rpt_wrong', 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'vault' }),
    });
    expect(answer.status).toBe(401);
  });

  test('a deleted document drops out of the next retrieval; so does one embedded by another model', async () => {
    const doomed = (await readyDocument(account, VAULT('5550'), 'doomed.txt')).document_id;
    const session = await sessionWith(account, [doomed, clinic]);
    const question = 'What is the combination of the storage vault?';
    expect((await session.passagesFor(question))[0]?.document_id).toBe(doomed);
    expect((await account.call('DELETE', `/v1/documents/${doomed}`)).status).toBe(204);
    expect((await session.passagesFor(question)).map((p) => p.document_id)).not.toContain(doomed);

    const session2 = await sessionWith(account, [clinic]);
    const db = service.services.database.db;
    const parking = 'Where can patients park their car?';
    expect(await session2.passagesFor(parking)).not.toEqual([]);
    await db.update(documents).set({ embeddingModel: 'another-model' }).where(eq(documents.id, clinic));
    expect(await session2.passagesFor(parking)).toEqual([]);
    await db.update(documents).set({ embeddingModel: OFFLINE_EMBEDDING_MODEL }).where(eq(documents.id, clinic));
  });

  test('an ended session retrieves nothing; a bad body is 422', async () => {
    const session = await sessionWith(account, [clinic]);
    expect((await session.ask('')).status).toBe(422);
    await service.services.database.db.update(sessions).set({ status: 'ended' }).where(eq(sessions.id, session.id));
    expect(await session.passagesFor('Where can patients park their car?')).toEqual([]);
  });
});
