// What an uploaded document is, judged from its bytes and, for the text formats that bytes
// cannot tell apart, its name: a PDF by its magic number; else it must be text (UTF-8, UTF-16 with its BOM, or Windows-1252), which is
// HTML when its name or its first tag says so, Markdown when its name ends in .md, else plain
// text. Anything else (an image, an archive, a Word file, binary junk) is refused at upload.
import { fileTypeFromBuffer } from 'file-type';
import { controlCharacters } from '../http/control-characters.ts';

export const DOCUMENT_TYPES = ['text/plain', 'text/markdown', 'text/html', 'application/pdf'] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

const HTML_NAME = /\.(html?|xhtml)$/i;
const MARKDOWN_NAME = /\.(md|markdown|mdown|mkdn?|mdx)$/i;
/** After blanks and comments, a doctype or one of the structural tags (tried once, where they end). */
const HTML_TAG = /(?:<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>])/iy;
const BLANKS = /\s*/y;
/** Controls a text file does not hold (tab, line feed, form feed and carriage return it may). */
const CONTROL = controlCharacters('tab, line breaks and form feed', { global: true });

/** file-type's text-based results, which may still be a text upload (an XML file is text). */
const TEXTUAL_MIMES = new Set(['application/xml', 'image/svg+xml', 'text/calendar', 'text/vtt']);

/** The document's type, or undefined when it is none of the four. */
export async function documentType(bytes: Uint8Array, name: string): Promise<DocumentType | undefined> {
  if (bytes.length === 0) return 'text/plain'; // empty: accepted, and its processing says so
  const detected = await fileTypeFromBuffer(bytes);
  if (detected?.mime === 'application/pdf') return 'application/pdf';
  if (detected && !TEXTUAL_MIMES.has(detected.mime)) return undefined;
  const text = documentText(bytes);
  if (text === undefined) return undefined;
  if (HTML_NAME.test(name) || startsLikeHtml(text.slice(0, 4096))) return 'text/html';
  if (MARKDOWN_NAME.test(name)) return 'text/markdown';
  return 'text/plain';
}

/**
 * Whether the text starts (after blanks and comments) like an HTML file. A scan, not one pattern:
 * `(<!--[\s\S]*?-->\s*)*` before the tag backtracked through every way to split the comments.
 */
function startsLikeHtml(head: string): boolean {
  let at = 0;
  for (;;) {
    BLANKS.lastIndex = at;
    BLANKS.test(head);
    at = BLANKS.lastIndex;
    if (!head.startsWith('<!--', at)) break;
    const end = head.indexOf('-->', at + 4);
    if (end < 0) return false;
    at = end + 3;
  }
  HTML_TAG.lastIndex = at;
  return HTML_TAG.test(head);
}

/** More controls than one in a hundred characters: binary, not text (counting stops there). */
function mostlyText(text: string): boolean {
  const allowed = text.length / 100;
  let controls = 0;
  CONTROL.lastIndex = 0;
  while (CONTROL.exec(text)) if (++controls > allowed) return false;
  return true;
}

/** UTF-16 by its byte-order mark (Notepad's and Excel's "Unicode text"), else undefined. */
function utf16Encoding(bytes: Uint8Array): 'utf-16le' | 'utf-16be' | undefined {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return undefined;
}

/**
 * The bytes as text (without a BOM), or undefined when they are not text: UTF-16 when a BOM says
 * so, UTF-8, else Windows-1252 (what older Windows editors save "plain text" as: a leaflet written
 * there is refused otherwise).
 */
export function documentText(bytes: Uint8Array): string | undefined {
  let text: string;
  try {
    text = new TextDecoder(utf16Encoding(bytes) ?? 'utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    // Binary junk (or broken UTF-16) read as Windows-1252 is full of controls, and refused below.
    text = new TextDecoder('windows-1252').decode(bytes);
  }
  // Text may still be binary (NULs, UTF-16): a text file has next to no controls.
  if (text.includes('\0') || !mostlyText(text)) return undefined;
  return text;
}
