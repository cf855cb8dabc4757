// A PDF's text layer with unpdf (Mozilla's PDF.js), within bounds (issue 41): a file of a few
// kilobytes can hold streams that inflate to gigabytes, or claim millions of pages. Before PDF.js
// sees it, every zlib stream is inflated here with a ceiling on the total (zlib's
// maxOutputLength stops it at the ceiling, without producing the rest); then pages are read one
// at a time, at most maxPages, until maxCharacters of text. What slips past these (another
// filter's expansion) is left to the extraction process's memory and time bounds.
import { inflateSync } from 'node:zlib';
import { getDocumentProxy } from 'unpdf';
import { DocumentProblem, type ExtractionBounds, tooLong } from './extraction-bounds.ts';

const PDF_UNREADABLE = 'The PDF could not be read (damaged?); upload another copy, or the text itself';
const PDF_PASSWORD = 'The PDF is password-protected; upload it without a password';

const STREAM_START = /stream\r?\n/g;

/** The bytes all zlib streams of the file inflate to, counted up to `ceiling` (+1 when over). */
export function inflatedBytes(bytes: Uint8Array, ceiling: number): number {
  const file = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const text = file.toString('latin1');
  let total = 0;
  STREAM_START.lastIndex = 0;
  for (let start = STREAM_START.exec(text); start; start = STREAM_START.exec(text)) {
    const from = start.index + start[0].length;
    const end = text.indexOf('endstream', from);
    const data = file.subarray(from, end < 0 ? file.length : end);
    STREAM_START.lastIndex = end < 0 ? text.length : end + 'endstream'.length;
    if (data.length < 2 || (data[0]! & 0x0f) !== 8) continue; // not zlib (deflate's method is 8)
    try {
      // Z_SYNC_FLUSH: a truncated stream counts what it gives rather than throwing.
      total += inflateSync(data, { maxOutputLength: ceiling - total + 1, finishFlush: 2 }).length;
    } catch (error) {
      if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') return ceiling + 1;
      // Not a zlib stream after all, or damaged: PDF.js judges it.
    }
    if (total > ceiling) return total;
  }
  return total;
}

export async function pdfText(bytes: Uint8Array, bounds: ExtractionBounds): Promise<string> {
  if (inflatedBytes(bytes, bounds.maxPdfInflatedBytes) > bounds.maxPdfInflatedBytes)
    throw new DocumentProblem(
      `The PDF expands to more than ${Math.round(bounds.maxPdfInflatedBytes / 1024 / 1024)} MB when read; upload its text, or split it`,
    );
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // A copy: PDF.js may take over (detach) the buffer it is given.
    pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 }); // 0: errors only, thrown
  } catch (error) {
    throw unreadable(error);
  }
  try {
    if (pdf.numPages > bounds.maxPdfPages)
      throw new DocumentProblem(
        `The PDF has ${pdf.numPages} pages; at most ${bounds.maxPdfPages} are read. Split it into smaller documents`,
      );
    const pages: string[] = [];
    let characters = 0;
    for (let number = 1; number <= pdf.numPages; number++) {
      const content = await (await pdf.getPage(number)).getTextContent();
      const page = content.items.map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : '') : '')).join('');
      characters += page.replace(/\s+/g, ' ').length; // as documentText counts
      if (characters > bounds.maxCharacters) throw tooLong(bounds);
      pages.push(page);
    }
    return pages.join('\n\n');
  } catch (error) {
    throw error instanceof DocumentProblem ? error : unreadable(error);
  } finally {
    await pdf.loadingTask.destroy();
  }
}

function unreadable(error: unknown): DocumentProblem {
  return new DocumentProblem((error as Error).name === 'PasswordException' ? PDF_PASSWORD : PDF_UNREADABLE);
}
