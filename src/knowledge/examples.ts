// Examples of /v1/documents for /openapi.json (src/openapi/examples.ts spreads them into its
// list by operationId; test/http/openapi-examples.test.ts checks each against its schema).
const DOCUMENT_ID = 'doc_8Hn3Qw6Zr1Ys5Vd0Lm2KtB';
const CREATED = '2026-11-24T09:30:00.000Z';

const ready = {
  document_id: DOCUMENT_ID,
  name: 'Patient leaflet',
  content_type: 'application/pdf',
  bytes: 182_344,
  status: 'ready',
  detail: null,
  chunks: 41,
  test: false,
  created_at: CREATED,
  updated_at: '2026-11-24T09:30:06.000Z',
};

export const DOCUMENT_EXAMPLES = {
  uploadDocument: {
    responses: {
      202: { ...ready, status: 'processing', chunks: 0, updated_at: CREATED },
      413: { detail: 'Document too large: at most 10 MB' },
      415: { detail: 'Unsupported type: send text, Markdown, HTML or PDF' },
    },
  },
  listDocuments: { responses: { 200: [ready] } },
  getDocument: {
    responses: {
      200: {
        ...ready,
        document_id: 'doc_3Lp9Vx2Qw7Kt5Nz1Hc8RbM',
        name: 'Scanned price list',
        status: 'failed',
        detail: 'The PDF has no text layer (scanned pages?); upload a PDF with selectable text, or the text itself',
        chunks: 0,
      },
      404: { detail: 'Document not found' },
    },
  },
  deleteDocument: { responses: { 404: { detail: 'Document not found' } } },
};
