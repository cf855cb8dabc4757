// Documents built to be slow or large to process (issue 41), uploaded through the real route on
// both engines: the upload answers within seconds, /healthz keeps answering in under a second
// while each is processed (this test shares the service's event loop, so any work on it shows),
// and the document ends `ready` or `failed` with a reason inside its budget. Each input is sized
// so that the code before issue 41 (extraction on the API's event loop, patterns that rescanned
// long runs, html-to-text's colspan grid, PDF.js inflating without a bound, a passage each
// embedded however many) fails it. Then each bound, and the stops on time and memory.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { createDeflate, deflateSync } from 'node:zlib';
import { EXTRACTION_NICE_INCREMENT, EXTRACTION_WALL_MULTIPLE } from '../../src/knowledge/isolated-extraction.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../support/fakes/openai.ts';
import { mainThreadCpuMs } from '../support/main-thread-cpu.ts';
import { statFields } from '../support/proc-stat.ts';
import {
  ENGINES,
  type Engine,
  startTestService,
  type TestAccount,
  type TestService,
  testOn,
} from '../support/service.ts';
import { type DocumentBody, pdfFromStreams, pdfWithPages, processed, upload } from './support.ts';

const BUDGET_SECONDS = 30;

/** The gigabyte bomb, deflated once for both engines (seconds of level-9 deflate each time). */
let gigabyteBomb: Promise<Uint8Array> | undefined;
const deflatedGigabyte = () => {
  gigabyteBomb ??= deflateBomb(1024 ** 3);
  return gigabyteBomb;
};

/** A zlib stream of `total` bytes of PDF text operators: a few MB that inflate to `total`. */
async function deflateBomb(total: number): Promise<Uint8Array> {
  const line = Buffer.from('BT /F1 12 Tf 72 720 Td (All work and no play makes a dull document.) Tj ET\n');
  const chunk = Buffer.alloc(16 * 1024 * 1024);
  for (let i = 0; i < chunk.length; i += line.length) line.copy(chunk, i);
  const deflate = createDeflate({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (data: Buffer) => out.push(data));
  const ended = new Promise((resolve) => deflate.on('end', resolve));
  for (let written = 0; written < total; written += chunk.length)
    if (!deflate.write(chunk)) await new Promise((resolve) => deflate.once('drain', resolve));
  deflate.end();
  await ended;
  return Buffer.concat(out);
}

/**
 * The suite's service, its embeddings from OpenAI's wire fake: what is measured here is the
 * extraction and its bounds, and loading the offline model (~0.1 s a passage) would be most of the
 * time. `env` adds the bounds under test.
 */
function serviceWithWireEmbeddings(engine: Engine, env: Record<string, string>): { readonly service: TestService } {
  const suite = {} as { service: TestService; openai: FakeOpenAI };
  beforeAll(async () => {
    suite.openai = startFakeOpenAI({ apiKey: 'sk-test' });
    suite.service = await startTestService(engine, {
      env: {
        OPENAI_API_KEY: 'sk-test',
        OPENAI_BASE_URL: suite.openai.url,
        SESSION_SWEEP_INTERVAL_SECONDS: '3600',
        ...env,
      },
    });
  });
  afterAll(async () => {
    await suite.service?.stop();
    await suite.openai?.stop();
  });
  return suite;
}

describe.each(ENGINES)('hostile documents on %s', (engine) => {
  const suite = serviceWithWireEmbeddings(engine, { KNOWLEDGE_PROCESSING_SECONDS: String(BUDGET_SECONDS) });
  let account: TestAccount;
  beforeAll(async () => {
    account = await suite.service.account();
  });

  /**
   * Uploads, then watches /healthz every 50 ms until the document is processed: the worst answer's
   * wall time, and the most CPU this process's main thread used during one answer (the loop held
   * by the service's own work; the rest of a slow answer is the host running something else).
   */
  async function processWatched(content: BlobPart, fileName: string) {
    const started = performance.now();
    const accepted = await upload(account, content, fileName);
    const answeredMs = performance.now() - started;
    let worstHealthMs = 0;
    let worstHeldMs = 0;
    let done = false;
    const watching = (async () => {
      while (!done) {
        const asked = performance.now();
        const cpuBefore = mainThreadCpuMs();
        const health = await suite.service.call('GET', '/healthz');
        const wallMs = performance.now() - asked;
        const cpuAfter = mainThreadCpuMs();
        worstHealthMs = Math.max(worstHealthMs, wallMs);
        worstHeldMs = Math.max(
          worstHeldMs,
          cpuBefore === undefined || cpuAfter === undefined ? wallMs : cpuAfter - cpuBefore,
        );
        expect(health.status).toBe(200);
        await Bun.sleep(50);
      }
    })();
    const document = await processed(account, accepted.document_id, (BUDGET_SECONDS + 15) * 1000).finally(() => {
      done = true;
    });
    await watching;
    return { document, answeredMs, worstHealthMs, worstHeldMs, totalMs: performance.now() - started };
  }

  function expectBounded(
    run: Awaited<ReturnType<typeof processWatched>>,
    end: Partial<DocumentBody> & { status: DocumentBody['status'] },
  ) {
    expect(run.document).toMatchObject(end);
    expect(run.answeredMs).toBeLessThan(5_000);
    // Held by this process's work: under a second (the faults held it 1.3 s and more, all CPU).
    // On the wall, bounded loosely: a loaded host may not run the process for a moment.
    expect(run.worstHeldMs).toBeLessThan(1_000);
    expect(run.worstHealthMs).toBeLessThan(3_000);
    expect(run.totalMs).toBeLessThan((BUDGET_SECONDS + 5) * 1000);
  }

  test('Markdown and text with long runs of blank and whitespace-only lines are read, their words kept', async () => {
    const words = (n: number) => `Fact ${n}: the gym opens at ${6 + n} am.`;
    const blank = '\n'.repeat(200_000);
    const spaces = '   \n'.repeat(60_000);
    const tabs = ' \t \n\n'.repeat(40_000);
    for (const [content, fileName] of [
      [`# Hours\n${blank}${words(1)}${spaces}> ${words(2)}${tabs}- ${words(3)}`, 'runs.md'],
      [`${words(1)}${blank}${words(2)}${spaces}${words(3)}${tabs}`, 'runs.txt'],
    ] as const) {
      const run = await processWatched(content, fileName);
      expectBounded(run, { status: 'ready', detail: null });
      expect(run.document.chunks).toBeGreaterThanOrEqual(1);
    }
  });

  test('Markdown built against its patterns: unclosed marks, brackets and tags on one long line', async () => {
    const line = `${'**a '.repeat(20_000)}${'[x'.repeat(20_000)}${'<a'.repeat(20_000)}${'![y]('.repeat(10_000)}`;
    const table = `| a | b |\n${`${'|'.repeat(2000)} - ${'-'.repeat(2000)} :\n`.repeat(20)}`;
    const run = await processWatched(`Start of the page.\n\n${line}\n\n${table}\n\nEnd of the page.`, 'marks.md');
    expectBounded(run, { status: 'ready', detail: null });
  });

  test('HTML: deeply nested tags, repeated and nested comments, a cell spanning a million columns', async () => {
    const inputs: [string, string][] = [
      [
        `<html><body>${'<div>'.repeat(100_000)}deep${'</div>'.repeat(100_000)}<p>Shallow words.</p></body></html>`,
        'deep.html',
      ],
      [
        `${'<!-- x -->'.repeat(50_000)}<!--${'<!--'.repeat(50_000)}--><html><body><p>After comments.</p></body></html>`,
        'comments.html',
      ],
      [`${'<!--'.repeat(100_000)}<html>`, 'unclosed.bin'], // judged HTML or not from its start: a scan now
      [
        '<html><body><table><tr><td colspan="1000000" rowspan="1000000">Open daily</td></tr></table></body></html>',
        'span.html',
      ],
      [
        `<html><body><p>Unclosed tags:</p>${'<b><i><span>'.repeat(30_000)}words${'<p>'.repeat(30_000)}</body></html>`,
        'tags.html',
      ],
    ];
    for (const [content, fileName] of inputs) {
      const run = await processWatched(content, fileName);
      expectBounded(run, { status: 'ready', detail: null });
    }
    // The million-column cell is read as one cell (the 93-byte page that froze the service).
    const span = await processWatched(
      '<table><tr><td colspan="1000000" rowspan="1000000">Open daily</td></tr></table>',
      'cell.html',
    );
    expectBounded(span, { status: 'ready', chunks: 1 });
  });

  test('a compressed PDF that inflates to a gigabyte fails at the inflation bound, without inflating it all', async () => {
    const pdf = pdfFromStreams([await deflatedGigabyte()]);
    expect(pdf.length).toBeLessThan(10 * 1024 * 1024);
    const run = await processWatched(pdf, 'bomb.pdf');
    expectBounded(run, { status: 'failed', detail: expect.stringMatching(/expands to more than 200 MB/) });
  });

  test('documents near the character bound: their passages are stored without holding the event loop', async () => {
    // ~700 passages each, an account filling up: PGlite runs in this process, and storing them in
    // one go (its vector index kept row by row) held the loop 1.3 s and more as the index grew.
    for (const topic of ['Harbour', 'Bakery', 'Museum']) {
      const run = await processWatched(paragraphs(700, topic), `${topic}.txt`);
      expectBounded(run, { status: 'ready', detail: null, chunks: 700 });
      console.log(
        `${topic}: ${run.totalMs.toFixed(0)} ms, /healthz at worst ${run.worstHealthMs.toFixed(0)} ms (${run.worstHeldMs} ms of the loop's CPU)`,
      );
    }
  }, 60_000);

  test('a document of a million tiny sentences fails at the character bound', async () => {
    const run = await processWatched('Hi. '.repeat(1_000_000), 'sentences.txt');
    expectBounded(run, { status: 'failed', detail: expect.stringMatching(/more than 500,000 characters/) });
  });
});

/** One heavy page's content stream, deflated once for every PDF below. */
let heavyPage: Uint8Array | undefined;
/** A PDF of `pages` pages, each ~5 MB of text operators (compressed): PDF.js needs ~150 MB and ~2 s a page for it. */
const heavyPdf = (pages: number) => {
  heavyPage ??= deflateSync('BT /F1 12 Tf (word word word) Tj ET\n'.repeat(150_000));
  return pdfFromStreams(Array.from({ length: pages }, () => heavyPage!));
};

const paragraphs = (n: number, topic: string) =>
  Array.from({ length: n }, (_, i) => `${topic} ${i}: ${'a sentence with words in it. '.repeat(22)}`).join('\n\n');

async function end(account: TestAccount, content: BlobPart, fileName: string) {
  return processed(account, (await upload(account, content, fileName)).document_id, 30_000);
}

describe.each(ENGINES)('processing bounds on %s', (engine) => {
  // The bounds are the extraction's and the passages' count.
  const suite = serviceWithWireEmbeddings(engine, {
    KNOWLEDGE_PROCESSING_MEMORY_MB: '100',
    KNOWLEDGE_MAX_PDF_PAGES: '2',
    KNOWLEDGE_MAX_PASSAGES_PER_DOCUMENT: '3',
    KNOWLEDGE_MAX_PASSAGES_PER_ACCOUNT: '4',
  });

  test('pages of a PDF, passages of a document, passages of an account: each a clear failure', async () => {
    const account = await suite.service.account();
    expect(await end(account, pdfWithPages([['One.'], ['Two.'], ['Three.']]), 'three.pdf')).toMatchObject({
      status: 'failed',
      detail: 'The PDF has 3 pages; at most 2 are read. Split it into smaller documents',
    });
    expect(await end(account, paragraphs(4, 'Topic'), 'four.txt')).toMatchObject({
      status: 'failed',
      detail: 'The document gives more than 3 passages; split it into smaller documents',
    });
    expect(await end(account, paragraphs(3, 'First'), 'first.txt')).toMatchObject({ status: 'ready', chunks: 3 });
    expect(await end(account, paragraphs(2, 'Second'), 'second.txt')).toMatchObject({
      status: 'failed',
      detail: "The account's documents may hold 4 passages together; delete documents to make room",
    });
    // Another account has its own room.
    expect(await end(await suite.service.account(), paragraphs(2, 'Other'), 'other.txt')).toMatchObject({
      status: 'ready',
    });
  });

  test('extraction is stopped at its memory bound, and says so', async () => {
    const account = await suite.service.account();
    expect(await end(account, heavyPdf(1), 'heavy.pdf')).toMatchObject({
      status: 'failed',
      detail:
        'Reading the document needed more than 100 MB of memory and was stopped; upload a smaller document, or its text',
    });
    // Within the bound, the same kind of file is read (the stop is the bound, not the type).
    expect(await end(account, pdfWithPages([['Small enough.']]), 'light.pdf')).toMatchObject({ status: 'ready' });
  });
});

describe.each(ENGINES)('processing budget on %s', (engine) => {
  const suite = serviceWithWireEmbeddings(engine, {
    KNOWLEDGE_PROCESSING_SECONDS: '2',
    // Only time stops the slow PDF here: its text and memory bounds are out of the way.
    KNOWLEDGE_MAX_DOCUMENT_CHARACTERS: String(100_000_000),
    KNOWLEDGE_MAX_PDF_INFLATED_MB: '2000',
    KNOWLEDGE_PROCESSING_MEMORY_MB: '4096',
  });

  test('processing is stopped when its time is up, not waited for, and says so', async () => {
    const account = await suite.service.account();
    const started = performance.now();
    const tooSlow =
      'Processing took longer than 2 s and was stopped; upload a smaller or simpler document, or its text';
    // Twelve pages of ~2 million characters each: ~1.4 s of CPU a page on this machine, unbounded.
    expect(await end(account, heavyPdf(12), 'slow.pdf')).toMatchObject({ status: 'failed', detail: tooSlow });
    // Stopped at 2 s of its CPU time, or at five times the budget on the wall if the machine is
    // too busy to give it that (EXTRACTION_WALL_MULTIPLE).
    expect(performance.now() - started).toBeLessThan(2_000 * EXTRACTION_WALL_MULTIPLE + 1_500);
    // The next document is not held up by the stopped one: it is processed, and read.
    expect(await end(account, 'Short and sweet.', 'short.txt')).toMatchObject({ status: 'ready' });
  });

  testOn(engine === 'pglite')(
    "the budget counts the reading's CPU time, not its wait for the CPU (the engine is not the point)",
    async () => {
      const account = await suite.service.account();
      // Forty passages: what follows the reading (their embeddings and writes) is counted on the
      // wall, and 400 of them took the 2 s budget's rest beside a loaded run (run 92).
      const document = await upload(account, paragraphs(40, 'Waiting'), 'waiting.txt');
      // The reading process is frozen for longer than the whole budget, as a machine too busy to
      // run it would hold it, then goes on: it spent next to none of its own time. (Found while
      // it starts: the process's start alone takes longer than this loop's 2 ms.)
      let pid: number | undefined;
      for (const deadline = Date.now() + 5_000; pid === undefined && Date.now() < deadline; await Bun.sleep(2))
        pid = extractionChild(process.pid)?.pid;
      expect(pid).toBeDefined();
      process.kill(pid!, 'SIGSTOP');
      await Bun.sleep(3_000);
      try {
        process.kill(pid!, 'SIGCONT');
      } catch {
        // Stopped for good while frozen: the document's status says so below.
      }
      expect(await processed(account, document.document_id, 30_000)).toMatchObject({ status: 'ready' });
    },
  );

  test('the extraction process runs below the API on the CPU: background work, not the answers', async () => {
    const account = await suite.service.account();
    const document = await upload(account, heavyPdf(8), 'slow.pdf');
    // The service runs in this process: its extraction process is our child.
    let nice: number | undefined;
    for (const deadline = Date.now() + 5_000; nice === undefined && Date.now() < deadline; await Bun.sleep(20))
      nice = extractionChild(process.pid)?.nice;
    expect(nice).toBe(Math.min(19, getPriority() + EXTRACTION_NICE_INCREMENT));
    // Its end is the test above's: deleted, its work stops at once rather than at the budget.
    expect((await account.call('DELETE', `/v1/documents/${document.document_id}`)).status).toBe(204);
  });
});

/** `parent`'s extraction process and its nice value, if one is running (Linux's /proc). */
function extractionChild(parent: number): { pid: number; nice: number } | undefined {
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('extraction-process.ts')) continue;
      const fields = statFields(`/proc/${pid}/stat`);
      if (Number(fields[1]) === parent) return { pid: Number(pid), nice: Number(fields[16]) };
    } catch {
      // It ended while being read.
    }
  }
  return undefined;
}
