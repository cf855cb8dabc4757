// A document's passages from its bytes: its text from each type (file-types.ts) with a
// maintained library where the format needs one (pdf-text.ts: unpdf, html-text.ts:
// html-to-text; markdown-text.ts keeps Markdown's words without its marks), then cut
// (chunking.ts). Every step is linear in the input and stops at the bounds
// (extraction-bounds.ts). It runs in the extraction process (extraction-process.ts), never
// on the API's event loop. What cannot give text is a DocumentProblem the user reads.
import { controlCharacters } from '../http/control-characters.ts';
import { chunkText } from './chunking.ts';
import { DocumentProblem, type ExtractionBounds, tooLong, tooManyPassages } from './extraction-bounds.ts';
import type { DocumentType } from './file-types.ts';
import { documentText as decodedText } from './file-types.ts';
import { htmlText } from './html-text.ts';
import { markdownText } from './markdown-text.ts';
import { pdfText } from './pdf-text.ts';

export { DocumentProblem } from './extraction-bounds.ts';

export const EMPTY_FILE = 'The file is empty; upload a document with text in it';
const NO_TEXT = 'The document has no text to answer from; upload one with text in it';
const PDF_NO_TEXT = 'The PDF has no text layer (scanned pages?); upload a PDF with selectable text, or the text itself';
const NOT_TEXT = 'The file is not UTF-8 text; save it as UTF-8 and upload it again';

/** Controls the database and the models do without (tab and line feed are kept). */
const CONTROL = controlCharacters('tab and line breaks', { global: true });

export async function documentText(bytes: Uint8Array, type: DocumentType, bounds: ExtractionBounds): Promise<string> {
  if (bytes.length === 0) throw new DocumentProblem(EMPTY_FILE);
  const raw = type === 'application/pdf' ? await pdfText(bytes, bounds) : fromText(bytes, type);
  // Counted as read: a run of blanks is one character (a page of empty lines holds no text).
  if (raw.length > bounds.maxCharacters && raw.replace(/\s+/g, ' ').length > bounds.maxCharacters)
    throw tooLong(bounds);
  const text = raw.replace(/\r\n?/g, '\n').replace(CONTROL, ' ').normalize('NFC');
  if (!/[\p{L}\p{N}]/u.test(text)) throw new DocumentProblem(type === 'application/pdf' ? PDF_NO_TEXT : NO_TEXT);
  return text;
}

/** The document's passages, in order, or the DocumentProblem that stopped them. */
export async function documentPassages(
  bytes: Uint8Array,
  type: DocumentType,
  bounds: ExtractionBounds,
): Promise<string[]> {
  const passages = chunkText(await documentText(bytes, type, bounds));
  if (passages.length > bounds.maxPassages) throw tooManyPassages(bounds);
  return passages;
}

function fromText(bytes: Uint8Array, type: Exclude<DocumentType, 'application/pdf'>): string {
  const text = decodedText(bytes);
  if (text === undefined) throw new DocumentProblem(NOT_TEXT);
  if (type === 'text/html') return htmlText(text);
  if (type === 'text/markdown') return markdownText(text);
  return text;
}
