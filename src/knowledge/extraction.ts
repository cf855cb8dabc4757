// A document's text, from each type (file-types.ts) with a maintained library where the format
// needs one: unpdf (Mozilla's PDF.js) for PDF, html-to-text for HTML; Markdown keeps its words
// without its markup. What cannot give text is a DocumentProblem whose message the user reads.
import { convert } from 'html-to-text';
import { extractText, getDocumentProxy } from 'unpdf';
import type { DocumentType } from './file-types.ts';
import { documentText as decodedText } from './file-types.ts';

/** Why a document cannot be used, worded for the person who uploaded it (the document's `detail`). */
export class DocumentProblem extends Error {}

export const EMPTY_FILE = 'The file is empty; upload a document with text in it';
const NO_TEXT = 'The document has no text to answer from; upload one with text in it';
const PDF_NO_TEXT = 'The PDF has no text layer (scanned pages?); upload a PDF with selectable text, or the text itself';
const PDF_UNREADABLE = 'The PDF could not be read (damaged?); upload another copy, or the text itself';
const PDF_PASSWORD = 'The PDF is password-protected; upload it without a password';
const NOT_TEXT = 'The file is not UTF-8 text; save it as UTF-8 and upload it again';

/** Controls the database and the models do without (tab and line feed are kept). */
const CONTROL = /(?![\t\n])\p{Cc}/gu;

export async function documentText(bytes: Uint8Array, type: DocumentType): Promise<string> {
  if (bytes.length === 0) throw new DocumentProblem(EMPTY_FILE);
  const raw = type === 'application/pdf' ? await pdfText(bytes) : fromText(bytes, type);
  const text = raw.replace(/\r\n?/g, '\n').replace(CONTROL, ' ').normalize('NFC');
  if (!/[\p{L}\p{N}]/u.test(text)) throw new DocumentProblem(type === 'application/pdf' ? PDF_NO_TEXT : NO_TEXT);
  return text;
}

function fromText(bytes: Uint8Array, type: Exclude<DocumentType, 'application/pdf'>): string {
  const text = decodedText(bytes);
  if (text === undefined) throw new DocumentProblem(NOT_TEXT);
  if (type === 'text/html') return htmlText(text);
  if (type === 'text/markdown') return markdownText(text);
  return text;
}

async function pdfText(bytes: Uint8Array): Promise<string> {
  let pages: string[];
  try {
    // A copy: PDF.js may take over (detach) the buffer it is given.
    const pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 }); // 0: errors only, thrown
    try {
      pages = (await extractText(pdf, { mergePages: false })).text;
    } finally {
      await pdf.loadingTask.destroy();
    }
  } catch (error) {
    if ((error as Error).name === 'PasswordException') throw new DocumentProblem(PDF_PASSWORD);
    throw new DocumentProblem(PDF_UNREADABLE);
  }
  return pages.join('\n\n');
}

function htmlText(html: string): string {
  return convert(html, {
    wordwrap: false,
    selectors: [
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
      // A page's menus and footer are on every page and answer nothing: they only dilute the
      // first passage (bench/knowledge: "What is the host's WhatsApp number?" missed its page).
      ...['nav', 'footer', 'script', 'style', 'noscript'].map((selector) => ({ selector, format: 'skip' })),
      ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
      { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
    ],
  });
}

/** Markdown's words: headings, emphasis, links, images, code fences and tables lose their marks. */
export function markdownText(markdown: string): string {
  return markdown
    .replace(/^---\n[\s\S]*?\n---\n/, '') // front matter
    .replace(/^\s*(```|~~~).*$/gm, '') // code fences (their code stays)
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1') // images: their alt text
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1') // links: their text
    .replace(/^\s{0,3}\[[^\]]+\]:\s+\S+.*$/gm, '') // link definitions
    .replace(/<[^>\n]+>/g, '') // inline HTML tags
    .replace(/^\s{0,3}#{1,6}\s+/gm, '') // heading marks
    .replace(/^\s{0,3}>\s?/gm, '') // quotes
    .replace(/^\s*([-*+]|\d+[.)])\s+/gm, '') // list marks
    .replace(/^\s*([-*_]\s*){3,}$/gm, '') // rules
    .replace(/^\s*\|?(\s*:?-+:?\s*\|)+\s*:?-*:?\s*$/gm, '') // table separators
    .replace(/\|/g, ' ') // table cells
    .replace(/(\*\*|__)(.+?)\1/g, '$2') // bold
    .replace(/\*(\S(?:[^*]*?\S)?)\*/g, '$1') // italics
    .replace(/(^|\W)_(\S(?:[^_]*?\S)?)_(?=\W|$)/gm, '$1$2') // italics, not snake_case
    .replace(/`([^`]+)`/g, '$1'); // inline code
}
