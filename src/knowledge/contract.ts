// The HTTP contract of /v1/documents (docs/api.md#documents): one schema per request and
// response, validated at the edge and shown in /openapi.json.
import { t } from 'elysia';
import { TestFlag } from '../accounts/index.ts';
import { Timestamp } from '../contract/index.ts';
import { oneOf } from '../http/enum-schema.ts';
import { DOCUMENT_TYPES } from './file-types.ts';
import { DOCUMENT_STATUSES } from './schema.ts';

export const DOCUMENT_NAME_MAX = 200;

export const UploadDocumentForm = t.Object({
  file: t.File({
    description:
      'The document: plain text (UTF-8), Markdown, HTML or PDF with a text layer, judged from its bytes and name; at most KNOWLEDGE_MAX_DOCUMENT_BYTES (10 MB).',
  }),
  name: t.Optional(
    t.String({
      minLength: 1,
      maxLength: DOCUMENT_NAME_MAX,
      description: "What passages from it are attributed to; default the file's name.",
      examples: ['Opening hours and prices'],
    }),
  ),
});

export const DocumentParams = t.Object({ document_id: t.String() });

export const ListDocumentsQuery = t.Object({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 1000, description: 'Page size; omit for every document.' })),
  after: t.Optional(t.String({ description: 'document_id of the last item of the previous page.' })),
});

export const DocumentResponse = t.Object(
  {
    document_id: t.String({ examples: ['doc_6kRvd0cYpGq3vP1tmC1a9Q'] }),
    name: t.String({ examples: ['Opening hours and prices'] }),
    content_type: oneOf(DOCUMENT_TYPES, 'The type read from the bytes and name.'),
    bytes: t.Integer({ description: "The upload's size.", examples: [18_204] }),
    status: oneOf(
      DOCUMENT_STATUSES,
      '`processing`: being read and embedded (seconds to minutes); `ready`: searched by the sessions it is attached to; `failed`: see `detail`.',
    ),
    detail: t.Union([t.String(), t.Null()], {
      description: 'Why processing failed, and what to do about it; null otherwise.',
      examples: [null],
    }),
    chunks: t.Integer({ description: 'The passages it was cut into (0 until ready).', examples: [31] }),
    test: TestFlag,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  {
    examples: [
      {
        document_id: 'doc_6kRvd0cYpGq3vP1tmC1a9Q',
        name: 'Opening hours and prices',
        content_type: 'application/pdf',
        bytes: 18_204,
        status: 'ready',
        detail: null,
        chunks: 31,
        test: false,
        created_at: '2026-05-04T09:12:31.000Z',
        updated_at: '2026-05-04T09:12:36.000Z',
      },
    ],
  },
);
