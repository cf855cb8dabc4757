// /v1/documents as a customer uses it (issue 33 point 3; docs/api.md#documents), on both
// engines: text, Markdown, HTML and a real PDF go from `processing` to `ready` with their
// document.ready webhook delivered; an empty file, a damaged PDF and a PDF without a text layer
// fail with a detail saying what to do (and document.failed); more than 10 MB is 413, a file
// that is not a document 415; lists page; another account sees nothing; a process that died
// mid-processing leaves its document to the sweep, which fails it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { documentChunks, documents } from '../../src/knowledge/schema.ts';
import { ENGINES, startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { addWebhook, WebhookReceiver } from '../support/webhooks.ts';
import { type DocumentBody, documentForm, pdfWithText, processed, readyDocument, upload } from './support.ts';

const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);

describe.each(ENGINES)('documents on %s', (engine) => {
  let service: TestService;
  let account: TestAccount;
  let receiver: WebhookReceiver;
  let secret: string;
  beforeAll(async () => {
    receiver = new WebhookReceiver();
    service = await startTestService(engine, {
      env: {
        WEBHOOKS_ALLOW_PRIVATE: 'true',
        WEBHOOKS_POLL_MS: '100',
        KNOWLEDGE_MAX_DOCUMENTS_PER_ACCOUNT: '12',
        SESSION_SWEEP_INTERVAL_SECONDS: '3600',
      },
    });
    account = await service.account();
    secret = (await addWebhook(account, { url: receiver.url('/hooks'), events: ['document.ready', 'document.failed'] }))
      .secret!;
  });
  afterAll(async () => {
    await service?.stop();
    receiver?.stop();
  });

  const eventFor = (documentId: string) =>
    receiver.waitFor(`the event of ${documentId}`, () =>
      receiver.verified('/hooks', secret).find((event) => event.data.document_id === documentId),
    );

  test('text, Markdown, HTML and PDF become ready, each with its document.ready webhook', async () => {
    const uploads: [BlobPart, string, string][] = [
      ['Our clinic opens at 9 am on Saturdays.\n\nParking is free in the garage.', 'hours.txt', 'text/plain'],
      ['# Prices\n\n- A **cleaning** costs [80 euros](https://example.com).', 'prices.md', 'text/markdown'],
      [
        '<!doctype html><html><head><title>t</title><script>var x = 1</script></head><body><h1>Team</h1><p>Dr. Alba speaks Spanish.</p></body></html>',
        'team.bin',
        'text/html',
      ],
      [
        pdfWithText(['The warehouse opens at 7 am on Sundays.', 'Deliveries arrive by noon.']),
        'warehouse.pdf',
        'application/pdf',
      ],
    ];
    const accepted = await Promise.all(uploads.map(([content, fileName]) => upload(account, content, fileName)));
    accepted.forEach((document, i) => {
      expect(document).toMatchObject({ name: uploads[i]![1], content_type: uploads[i]![2], detail: null });
      expect(document.bytes).toBeGreaterThan(0);
    });
    for (const document of accepted) {
      const ready = await processed(account, document.document_id);
      expect(ready).toMatchObject({ status: 'ready', detail: null });
      expect(ready.chunks).toBeGreaterThan(0);
      const event = await eventFor(document.document_id);
      expect(event).toMatchObject({
        type: 'document.ready',
        data: { document_id: document.document_id, name: document.name, chunks: ready.chunks },
      });
    }
    // What was kept is the text, without the markup.
    const db = service.services.database.db;
    const textOf = async (id: string) =>
      (await db.select().from(documentChunks).where(eq(documentChunks.documentId, id))).map((c) => c.text).join(' ');
    expect(await textOf(accepted[1]!.document_id)).toBe('Prices A cleaning costs 80 euros.');
    const html = await textOf(accepted[2]!.document_id);
    expect(html).toContain('Dr. Alba speaks Spanish.');
    expect(html).not.toMatch(/<|var x/);
    expect(await textOf(accepted[3]!.document_id)).toContain('The warehouse opens at 7 am on Sundays.');
    const [stored] = await db.select().from(documents).where(eq(documents.id, accepted[0]!.document_id));
    expect(stored).toMatchObject({ embeddingModel: service.services.knowledge.embedder.model, workedUntil: null });
  });

  test('an empty file, a damaged PDF and a PDF without text fail with what to do, and document.failed', async () => {
    const cases: [BlobPart, string, RegExp][] = [
      ['', 'empty.txt', /^The file is empty/],
      ['  \n\n \t ', 'blank.txt', /has no text/],
      [
        new Uint8Array([...new TextEncoder().encode('%PDF-1.4\n'), ...crypto.getRandomValues(new Uint8Array(2000))]),
        'junk.pdf',
        /could not be read/,
      ],
      [pdfWithText([]), 'scan.pdf', /no text layer \(scanned pages\?\)/],
    ];
    for (const [content, fileName, detail] of cases) {
      const accepted = await upload(account, content, fileName);
      const failed = await processed(account, accepted.document_id);
      expect(failed).toMatchObject({ status: 'failed', chunks: 0 });
      expect(failed.detail).toMatch(detail);
      expect(await eventFor(accepted.document_id)).toMatchObject({
        type: 'document.failed',
        data: { document_id: accepted.document_id, name: fileName, detail: failed.detail },
      });
    }
  });

  test('over 10 MB is 413; an image or binary junk is 415; the file is required', async () => {
    const big = await account.call('POST', '/v1/documents', {
      body: documentForm(new Uint8Array(10 * 1024 * 1024 + 1).fill(0x61), 'big.txt'),
    });
    expect(big.status).toBe(413);
    expect(await big.json()).toEqual({ detail: 'Document too large: at most 10 MB' });
    for (const [content, fileName] of [
      [PNG, 'notes.txt'],
      [crypto.getRandomValues(new Uint8Array(4096)), 'notes.txt'],
      [new Uint8Array([0x50, 0x4b, 0x03, 0x04, ...new Uint8Array(200)]), 'report.docx'],
    ] as const) {
      const answer = await account.call('POST', '/v1/documents', { body: documentForm(content, fileName) });
      expect(answer.status).toBe(415);
      expect(await answer.json()).toEqual({ detail: 'Unsupported type: send text, Markdown, HTML or PDF' });
    }
    const noFile = new FormData();
    noFile.append('name', 'x');
    const missing = await account.call('POST', '/v1/documents', { body: noFile });
    expect(missing.status).toBe(422);
    const controlled = await account.call('POST', '/v1/documents', {
      body: documentForm('The gym opens at 6 am.', 'gym.txt', 'Gym\u0001hours'),
    });
    expect(controlled.status).toBe(422);
    expect(((await controlled.json()) as { detail: { loc: string[] }[] }).detail[0]!.loc).toEqual(['body', 'name']);
  });

  test('a plain text file saved as Windows-1252 (not UTF-8) is read as such', async () => {
    const latin = new Uint8Array([
      ...new TextEncoder().encode('Caf'),
      0xe9,
      ...new TextEncoder().encode(' au lait: 2,50 '),
    ]);
    const ready = await readyDocument(account, new Uint8Array([...latin, 0x80]), 'menu.txt', 'Menu');
    expect(ready).toMatchObject({ status: 'ready', content_type: 'text/plain', chunks: 1 });
    const [chunk] = await service.services.database.db
      .select({ text: documentChunks.text })
      .from(documentChunks)
      .where(eq(documentChunks.documentId, ready.document_id));
    expect(chunk!.text).toBe('Café au lait: 2,50 €');
  });

  test('a text file saved as UTF-16 with its byte-order mark (either order) is read as such', async () => {
    const words = 'Ñandú opens at 9 on Sundays €';
    const little = new Uint8Array([0xff, 0xfe, ...new Uint8Array(Buffer.from(words, 'utf16le'))]);
    const swapped = Buffer.from(words, 'utf16le');
    swapped.swap16();
    const big = new Uint8Array([0xfe, 0xff, ...swapped]);
    for (const bytes of [little, big]) {
      const ready = await readyDocument(account, bytes, 'hours.txt', 'Hours');
      expect(ready).toMatchObject({ status: 'ready', content_type: 'text/plain', chunks: 1 });
      const [chunk] = await service.services.database.db
        .select({ text: documentChunks.text })
        .from(documentChunks)
        .where(eq(documentChunks.documentId, ready.document_id));
      expect(chunk!.text).toBe(words);
    }
    // UTF-16 without its mark stays refused: its NULs read as binary.
    const unmarked = await account.call('POST', '/v1/documents', {
      body: documentForm(new Uint8Array(Buffer.from(words, 'utf16le')), 'hours.txt'),
    });
    expect(unmarked.status).toBe(415);
  });

  test('read, list (paged), rename at upload, delete; another account sees none of it', async () => {
    const other = await service.account();
    const named = await readyDocument(account, 'The gym opens at 6 am.', 'gym.txt', 'Gym hours');
    expect(named.name).toBe('Gym hours');
    expect((await other.call('GET', `/v1/documents/${named.document_id}`)).status).toBe(404);
    expect((await other.call('DELETE', `/v1/documents/${named.document_id}`)).status).toBe(404);
    expect(await (await other.call('GET', '/v1/documents')).json()).toEqual([]);

    const all = (await (await account.call('GET', '/v1/documents')).json()) as DocumentBody[];
    expect(all[0]).toEqual(named);
    const first = await account.call('GET', '/v1/documents?limit=2');
    const page = (await first.json()) as DocumentBody[];
    expect(page.map((d) => d.document_id)).toEqual(all.slice(0, 2).map((d) => d.document_id));
    expect(first.headers.get('link')).toBe(`</v1/documents?limit=2&after=${page[1]!.document_id}>; rel="next"`);
    expect((await account.call('GET', '/v1/documents?after=doc_nope')).status).toBe(422);

    expect((await account.call('DELETE', `/v1/documents/${named.document_id}`)).status).toBe(204);
    expect((await account.call('GET', `/v1/documents/${named.document_id}`)).status).toBe(404);
    const db = service.services.database.db;
    expect(await db.select().from(documentChunks).where(eq(documentChunks.documentId, named.document_id))).toEqual([]);
  });

  test('an account holds at most KNOWLEDGE_MAX_DOCUMENTS_PER_ACCOUNT documents', async () => {
    const limited = await service.account();
    for (let i = 0; i < 12; i++) await upload(limited, '', `empty-${i}.txt`);
    const refused = await limited.call('POST', '/v1/documents', { body: documentForm('One more.', 'more.txt') });
    expect(refused.status).toBe(422);
    expect(await refused.json()).toMatchObject({ detail: [{ type: 'too_many_documents' }] });
  });

  test('a document whose process died mid-processing is failed by the sweep once its lease ran out', async () => {
    const db = service.services.database.db;
    const id = `doc_interrupted${engine}`;
    const base = { accountId: account.accountId, contentType: 'text/plain', bytes: 10, status: 'processing' as const };
    await db.insert(documents).values([
      { ...base, id, name: 'lost.txt', workedUntil: new Date(Date.now() - 1000) },
      { ...base, id: `${id}_alive`, name: 'alive.txt', workedUntil: new Date(Date.now() + 60_000) },
    ]);
    expect(await service.services.knowledge.sweep()).toBe(1);
    const lost = await processed(account, id);
    expect(lost).toMatchObject({
      status: 'failed',
      detail: 'Processing was interrupted; upload the document again',
    });
    expect(await eventFor(id)).toMatchObject({ type: 'document.failed', data: { detail: lost.detail } });
    expect((await (await account.call('GET', `/v1/documents/${id}_alive`)).json()) as DocumentBody).toMatchObject({
      status: 'processing',
    });
    await db.delete(documents).where(eq(documents.id, `${id}_alive`));
  });
});
