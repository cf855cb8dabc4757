// The extraction process: one per document, started by isolated-extraction.ts with the stored
// upload's path and the bounds. It prints one JSON line, ExtractionAnswer, and exits. A
// document an attacker built to be slow or large costs this process, which its parent stops at
// the time and memory bounds, and never the API's event loop (issue 41).
//
//   bun src/knowledge/extraction-process.ts FILE '{"type":"text/html","bounds":{…}}'
import { readFile } from 'node:fs/promises';
import { DocumentProblem, documentPassages } from './extraction.ts';
import type { ExtractionBounds } from './extraction-bounds.ts';
import type { DocumentType } from './file-types.ts';

export type ExtractionAnswer = { passages: string[] } | { problem: string } | { error: string };

export interface ExtractionJob {
  type: DocumentType;
  bounds: ExtractionBounds;
}

async function answer(file: string, job: ExtractionJob): Promise<ExtractionAnswer> {
  try {
    return { passages: await documentPassages(new Uint8Array(await readFile(file)), job.type, job.bounds) };
  } catch (error) {
    if (error instanceof DocumentProblem) return { problem: error.message };
    return { error: (error as Error).stack ?? String(error) };
  }
}

if (import.meta.main) {
  const [file, job] = process.argv.slice(2);
  const result = await answer(file!, JSON.parse(job!) as ExtractionJob);
  process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
}
