// What the knowledge suites share: real PDFs written by hand (PDF 1.4, Helvetica text lines,
// or a page with no text at all), uploads as a customer sends them, and waiting for processing.
import { expect } from 'bun:test';
import type { TestAccount } from '../support/service.ts';

/** A one-page PDF whose text layer holds these lines (ASCII), or no text at all when none are given. */
export function pdfWithText(lines: string[]): Uint8Array<ArrayBuffer> {
  return pdfWithPages([lines]);
}

/** A PDF of these pages (each its lines of text, or none for a page without a text layer). */
export function pdfWithPages(pages: string[][]): Uint8Array<ArrayBuffer> {
  const escaped = (line: string) => line.replace(/[\\()]/g, (c) => `\\${c}`);
  return pdfFromStreams(
    pages.map(
      (lines) =>
        lines.length
          ? `BT /F1 12 Tf 14 TL 72 720 Td ${lines.map((line) => `(${escaped(line)}) Tj T*`).join(' ')} ET`
          : '0.9 g 72 600 200 100 re f', // a grey box: a page, but no text layer (as a scan would be)
    ),
  );
}

/**
 * A PDF (1.4, Helvetica) with one page per content stream: text given as a string is stored as
 * is, bytes as a FlateDecode stream (a zlib stream written by the caller: a bomb, say).
 */
export function pdfFromStreams(contents: (string | Uint8Array)[]): Uint8Array<ArrayBuffer> {
  const font = 3 + contents.length * 2;
  const pages = contents.map((_, i) => `${3 + i * 2} 0 R`).join(' ');
  const parts: (string | Uint8Array)[] = [];
  const offsets: number[] = [];
  let length = 0;
  const add = (part: string | Uint8Array) => {
    parts.push(part);
    length += typeof part === 'string' ? Buffer.byteLength(part, 'latin1') : part.length;
  };
  const object = (number: number, ...body: (string | Uint8Array)[]) => {
    offsets[number] = length;
    add(`${number} 0 obj\n`);
    for (const part of body) add(part);
    add('\nendobj\n');
  };
  add('%PDF-1.4\n');
  object(1, '<< /Type /Catalog /Pages 2 0 R >>');
  object(2, `<< /Type /Pages /Kids [${pages}] /Count ${contents.length} >>`);
  contents.forEach((content, i) => {
    object(
      3 + i * 2,
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${4 + i * 2} 0 R /Resources << /Font << /F1 ${font} 0 R >> >> >>`,
    );
    const filter = typeof content === 'string' ? '' : ' /Filter /FlateDecode';
    object(4 + i * 2, `<< /Length ${content.length}${filter} >>\nstream\n`, content, '\nendstream');
  });
  object(font, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  const xref = length;
  let tail = `xref\n0 ${font + 1}\n0000000000 65535 f \n`;
  for (let n = 1; n <= font; n++) tail += `${String(offsets[n]).padStart(10, '0')} 00000 n \n`;
  tail += `trailer\n<< /Size ${font + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  add(tail);
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    const bytes = typeof part === 'string' ? Buffer.from(part, 'latin1') : part;
    out.set(bytes, at);
    at += bytes.length;
  }
  return out;
}

export interface DocumentBody {
  document_id: string;
  name: string;
  content_type: string;
  bytes: number;
  status: 'processing' | 'ready' | 'failed';
  detail: string | null;
  chunks: number;
  created_at: string;
  updated_at: string;
}

export function documentForm(content: BlobPart, fileName: string, name?: string): FormData {
  const form = new FormData();
  form.append('file', new Blob([content]), fileName);
  if (name !== undefined) form.append('name', name);
  return form;
}

/** Uploads a document and expects the 202 `processing` answer. */
export async function upload(account: TestAccount, content: BlobPart, fileName: string, name?: string) {
  const answer = await account.call('POST', '/v1/documents', { body: documentForm(content, fileName, name) });
  const body = (await answer.json()) as DocumentBody;
  expect({ status: answer.status, body }).toMatchObject({ status: 202, body: { status: 'processing', chunks: 0 } });
  return body;
}

/** The document once its processing is over (ready or failed). */
export async function processed(account: TestAccount, documentId: string, timeoutMs = 60_000): Promise<DocumentBody> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const document = (await (await account.call('GET', `/v1/documents/${documentId}`)).json()) as DocumentBody;
    if (document.status !== 'processing') return document;
    if (Date.now() > deadline) throw new Error(`document ${documentId} still processing`);
    await Bun.sleep(100);
  }
}

/** Uploads and waits until it is ready. */
export async function readyDocument(account: TestAccount, content: BlobPart, fileName: string, name?: string) {
  const document = await processed(account, (await upload(account, content, fileName, name)).document_id);
  expect(document).toMatchObject({ status: 'ready', detail: null });
  return document;
}
