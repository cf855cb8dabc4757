// With an OpenAI provider (OPENAI_API_KEY / OPENAI_BASE_URL) documents and questions are
// embedded by its /v1/embeddings at 384 dimensions (test/support/fakes/openai.ts speaks the
// wire format: a hashed bag of words per input), documents carry that model, and retrieval
// works the same; KNOWLEDGE_EMBEDDINGS=offline keeps the offline model; a provider that fails
// fails the document with a detail, and a turn's retrieval with 503.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { hashApiKey } from '../../src/auth/api-keys.ts';
import { OFFLINE_EMBEDDING_MODEL } from '../../src/knowledge/index.ts';
import { documents } from '../../src/knowledge/schema.ts';
import { sessions } from '../../src/sessions/schema.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../support/fakes/openai.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { processed, readyDocument, upload } from './support.ts';

describe('OpenAI embeddings', () => {
  let openai: FakeOpenAI;
  let service: TestService;
  beforeAll(async () => {
    openai = startFakeOpenAI({ apiKey: 'sk-test' });
    service = await startTestService('pglite', {
      env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: openai.url, SESSION_SWEEP_INTERVAL_SECONDS: '3600' },
    });
  });
  afterAll(async () => {
    await service?.stop();
    await openai?.stop();
  });

  test('documents and questions go to /v1/embeddings at 384 dimensions, and are found by it', async () => {
    const account = await service.account();
    expect(service.services.knowledge.embedder.model).toBe('text-embedding-3-small');
    const ferry = await readyDocument(
      account,
      'The ferry to the island leaves the harbour every hour from 8 am.\n\nBicycles travel free on the ferry.',
      'ferry.txt',
    );
    const bakery = await readyDocument(account, 'The bakery sells rye bread and croissants.', 'bakery.txt');
    const [stored] = await service.services.database.db
      .select()
      .from(documents)
      .where(eq(documents.id, ferry.document_id));
    expect(stored!.embeddingModel).toBe('text-embedding-3-small');
    expect(openai.embeddings.length).toBeGreaterThanOrEqual(2);
    for (const call of openai.embeddings)
      expect(call).toMatchObject({ model: 'text-embedding-3-small', dimensions: 384 });

    const result = await service.services.knowledge.search({
      accountId: account.accountId,
      documentIds: [ferry.document_id, bakery.document_id],
      query: 'when does the ferry leave the harbour',
    });
    expect(result.floor).toBe(0.3);
    expect(result.passages[0]).toMatchObject({ document_id: ferry.document_id });
    expect(openai.embeddings.at(-1)!.input).toEqual(['when does the ferry leave the harbour']);
  });

  test('a provider that refuses fails the document with a detail, and the retrieval with 503', async () => {
    const broken = startFakeOpenAI({ apiKey: 'another-key' }); // answers 401 to our key
    const failing = await startTestService('pglite', {
      env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: broken.url, SESSION_SWEEP_INTERVAL_SECONDS: '3600' },
    });
    try {
      const account = await failing.account();
      const failed = await processed(account, (await upload(account, 'Some text.', 'text.txt')).document_id);
      expect(failed).toMatchObject({ status: 'failed' });
      expect(failed.detail).toMatch(/embeddings could not be computed/);
      // A document embedded while the provider worked, and a session answering from it.
      const db = failing.services.database.db;
      await db.update(documents).set({ status: 'ready', embeddingModel: 'text-embedding-3-small', detail: null });
      const token = `rpt_${crypto.randomUUID()}`;
      await db.insert(sessions).values({
        id: 'ses_openaidown',
        accountId: account.accountId,
        identityId: null,
        avatarEnabled: false,
        language: 'en',
        visualAwareness: false,
        dispatchId: 'AD_openaidown',
        visitorIdentity: 'visitor-openaidown',
        reportTokenHash: hashApiKey(token),
        maxDurationSeconds: 1800,
        documentIds: [failed.document_id],
      });
      const answer = await fetch(`${failing.url}/internal/sessions/ses_openaidown/knowledge`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'Some question' }),
      });
      expect(answer.status).toBe(503);
      expect(await answer.json()).toEqual({
        detail: 'The question could not be embedded; answer without the documents',
      });
    } finally {
      await failing.stop();
      await broken.stop();
    }
  });

  test('KNOWLEDGE_EMBEDDINGS=offline keeps the offline model beside an OpenAI provider', async () => {
    const offline = await startTestService('pglite', {
      env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: openai.url, KNOWLEDGE_EMBEDDINGS: 'offline' },
    });
    try {
      expect(offline.services.knowledge.embedder.model).toBe(OFFLINE_EMBEDDING_MODEL);
    } finally {
      await offline.stop();
    }
  });
});
