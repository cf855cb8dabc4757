// How a document's extraction grows with its size, for the inputs built to be slow (issue 41):
// each input at doubling sizes through the extraction process (src/knowledge/extraction-process.ts,
// as the service runs it), its wall time and peak memory (VmRSS polled every 10 ms). Linear
// growth shows as a time ratio near 2 per doubling (the process's ~60–250 ms start dominates
// the small sizes). Bounds are raised so that no size is refused.
//
//   npm run bench -- bench/knowledge/extraction-growth.ts [--max-kb 3200]
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import type { ExtractionAnswer } from '../../src/knowledge/extraction-process.ts';
import type { DocumentType } from '../../src/knowledge/file-types.ts';
import { pdfFromStreams } from '../../test/knowledge/support.ts';

const ENTRY = new URL('../../src/knowledge/extraction-process.ts', import.meta.url).pathname;
const BOUNDS = { maxCharacters: 1e9, maxPassages: 1e9, maxPdfPages: 1e6, maxPdfInflatedBytes: 4 * 1024 ** 3 };
const maxKb = Number(process.argv[process.argv.indexOf('--max-kb') + 1]) || 3200;

/** Each input: its type and its bytes at about `kb` kilobytes. */
const INPUTS: Record<string, [DocumentType, (kb: number) => Uint8Array]> = {
  'Markdown, blank lines': ['text/markdown', (kb) => text(`Hours.${'\n'.repeat(kb * 1024)}Closed.`)],
  'Markdown, whitespace lines': ['text/markdown', (kb) => text(`Hours.${'   \n'.repeat(kb * 256)}Closed.`)],
  'Markdown, unclosed marks': ['text/markdown', (kb) => text('**a [x <a ![y]( '.repeat(kb * 64))],
  'text, blank lines': ['text/plain', (kb) => text(`Hours.${' \n\n'.repeat(kb * 341)}Closed.`)],
  'HTML, nested tags': ['text/html', (kb) => text(`<p>Top.</p>${'<div>'.repeat(kb * 204)}deep`)],
  'HTML, comments': ['text/html', (kb) => text(`${'<!--'.repeat(kb * 256)}<html><p>x</p>`)],
  'HTML, spanning cells': [
    'text/html',
    (kb) => text(`<table>${'<tr><td colspan="1000000" rowspan="1000000">x</td></tr>'.repeat(kb * 18)}</table>`),
  ],
  'text, tiny sentences': ['text/plain', (kb) => text('Hi. '.repeat(kb * 256))],
  'PDF, deflated text (KB inflated)': [
    'application/pdf',
    (kb) => pdfFromStreams([deflateSync('BT /F1 12 Tf (word word) Tj ET\n'.repeat(Math.ceil((kb * 1024) / 31)))]),
  ],
};

function text(value: string): Uint8Array {
  return new TextEncoder().encode(value);
}

async function measure(type: DocumentType, bytes: Uint8Array, file: string) {
  await writeFile(file, bytes);
  const started = performance.now();
  const child = Bun.spawn([process.execPath, '--smol', ENTRY, file, JSON.stringify({ type, bounds: BOUNDS })], {
    stdout: 'pipe',
  });
  let peak = 0;
  const poll = setInterval(async () => {
    const status = await readFile(`/proc/${child.pid}/status`, 'utf8').catch(() => '');
    peak = Math.max(peak, Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0));
  }, 10);
  const output = await new Response(child.stdout).text();
  await child.exited;
  clearInterval(poll);
  const answer = JSON.parse(output) as ExtractionAnswer;
  const result =
    'passages' in answer ? `${answer.passages.length} passages` : 'problem' in answer ? 'refused' : 'error';
  return { ms: performance.now() - started, mb: peak / 1024, result };
}

const file = join(tmpdir(), `likeness-extraction-bench-${process.pid}`);
console.log(`extraction growth: ${new Date().toISOString().slice(0, 10)}, Bun ${Bun.version}`);
console.log('| input | size (KB) | time (ms) | ×time per doubling | peak RSS (MB) | result |');
console.log('|---|---:|---:|---:|---:|---|');
for (const [name, [type, make]] of Object.entries(INPUTS)) {
  let previous: number | undefined;
  for (let kb = 100; kb <= maxKb; kb *= 2) {
    const { ms, mb, result } = await measure(type, make(kb), file);
    const ratio = previous ? (ms / previous).toFixed(2) : '';
    console.log(`| ${name} | ${kb} | ${ms.toFixed(0)} | ${ratio} | ${mb.toFixed(0)} | ${result} |`);
    previous = ms;
  }
}
await rm(file, { force: true });
