// What the knowledge suites share: real PDFs written by hand (PDF 1.4, Helvetica text lines,
// or a page with no text at all), uploads as a customer sends them, and waiting for processing.
import { expect } from 'bun:test';
import type { TestAccount } from '../support/service.ts';

/** A one-page PDF whose text layer holds these lines (ASCII), or no text at all when none are given. */
export function pdfWithText(lines: string[]): Uint8Array<ArrayBuffer> {
  const escaped = (line: string) => line.replace(/[\\()]/g, (c) => `\\${c}`);
  const content = lines.length
    ? `BT /F1 12 Tf 14 TL 72 720 Td ${lines.map((line) => `(${escaped(line)}) Tj T*`).join(' ')} ET`
    : '0.9 g 72 600 200 100 re f'; // a grey box: a page, but no text layer (as a scan would be)
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let pdf = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(pdf.length);
    pdf += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  pdf += offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('');
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new TextEncoder().encode(pdf);
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
