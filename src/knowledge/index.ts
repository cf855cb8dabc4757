// Knowledge (docs/api.md#documents): /v1/documents for API keys and, as twins, the console;
// and the internal route a session's job retrieves each turn's passages from. A document is
// accepted with 202 and processed in the background (processing.ts); its passages are
// searched (search.ts) for the sessions it is attached to, and never outside its account.
import { count, eq } from 'drizzle-orm';
import { Elysia, t } from 'elysia';
import { type Audience, authenticatedRoutes, jobSession } from '../auth/index.ts';
import type { KnowledgeSettings } from '../config.ts';
import { type KnowledgeAnswer, KnowledgeRequest } from '../contract/knowledge.ts';
import { newId } from '../db/ids.ts';
import type { Database } from '../db/index.ts';
import { controlCharacters } from '../http/control-characters.ts';
import { ApiError, errorResponses, invalid } from '../http/errors.ts';
import { ownedItem } from '../http/owned-item.ts';
import { ownedList } from '../http/paging.ts';
import { log } from '../logging/index.ts';
import { formatBytes } from '../media/index.ts';
import { SessionParams } from '../sessions/index.ts';
import { DocumentParams, DocumentResponse, ListDocumentsQuery, UploadDocumentForm } from './contract.ts';
import { EmbeddingUnavailable } from './embedder.ts';
import { documentType } from './file-types.ts';
import { retrievalSeconds } from './metrics.ts';
import { presentDocument } from './presenter.ts';
import { documents } from './schema.ts';
import type { KnowledgeService } from './service.ts';
import { forgetDocument } from './store.ts';

export { EMBEDDING_DIMENSIONS, type Embedder, EmbeddingUnavailable } from './embedder.ts';
export { DOCUMENT_EXAMPLES } from './examples.ts';
export { OFFLINE_EMBEDDING_MODEL, OfflineEmbedder } from './offline-embedder.ts';
export { OpenAIEmbedder } from './openai-embedder.ts';
export { failInterruptedDocuments } from './processing.ts';
export {
  defaultSimilarityFloor,
  type SearchDeps,
  type SearchRequest,
  type SearchResult,
  search,
} from './search.ts';
export { createEmbedder, KnowledgeService } from './service.ts';
export { type SearchPath, searchCapabilities } from './store.ts';

export interface KnowledgeDeps {
  db: Database;
  settings: KnowledgeSettings;
  /** The embedder and the documents' processing (opened with the services). */
  knowledge: KnowledgeService;
}

/** `doc_` + 22 base62 characters, like the other ids (src/db/ids.ts). */
/** Like an identity's name; a file's name loses them instead. */
const NAME_FORBIDDEN = controlCharacters('none', { undecoded: true });
const NAME_CONTROLS = controlCharacters('none', { global: true });

const UNSUPPORTED = 'Unsupported type: send text, Markdown, HTML or PDF';

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a route table: Elysia infers each route's types along one chain, so a feature's routes stay one expression
export function documentRoutes<const Prefix extends string>(deps: KnowledgeDeps, audience: Audience<Prefix>) {
  const { db, settings, knowledge } = deps;
  const document = ownedItem(db, documents, 'document_id', 'Document', presentDocument);
  return authenticatedRoutes(db, audience, '/documents', 'Documents')
    .post(
      '',
      async ({ caller, body, set }) => {
        const { file } = body;
        if (file.size > settings.maxDocumentBytes)
          throw new ApiError(413, `Document too large: at most ${formatBytes(settings.maxDocumentBytes)}`);
        const bytes = new Uint8Array(await file.arrayBuffer());
        const type = await documentType(bytes, file.name);
        // Judged from the bytes, like identities' uploads: 415 (docs/decisions.md).
        if (!type) throw new ApiError(415, UNSUPPORTED);
        // Like an identity's name: what passages are attributed to, so no controls (a file's name may hold them).
        if (body.name !== undefined && NAME_FORBIDDEN.test(body.name))
          throw invalid(['body', 'name'], 'name must be text without control characters', 'string_invalid_characters');
        const name = (body.name?.trim() || file.name.replace(NAME_CONTROLS, '').trim() || 'document').slice(0, 200);
        const id = newId('doc');
        // Stored before the row exists, so a row reading `processing` always has its bytes; a refused
        // row takes its file with it.
        const stored = await knowledge.processing.store(id, bytes);
        const row = await db
          .transaction(async (tx) => {
            const [{ existing }] = (await tx
              .select({ existing: count() })
              .from(documents)
              .where(eq(documents.accountId, caller.accountId))) as [{ existing: number }];
            if (existing >= settings.maxDocumentsPerAccount)
              throw invalid(
                ['body'],
                `An account can have at most ${settings.maxDocumentsPerAccount} documents; delete one first`,
                'too_many_documents',
              );
            const [created] = await tx
              .insert(documents)
              .values({
                id,
                accountId: caller.accountId,
                name,
                contentType: type,
                bytes: bytes.length,
                status: 'processing',
                workedUntil: knowledge.processing.leaseUntil(),
              })
              .returning();
            return created!;
          })
          .catch(async (error) => {
            await knowledge.processing.discard(stored);
            throw error;
          });
        knowledge.processing.start({ id: row.id, accountId: row.accountId, name, contentType: type }, stored);
        set.status = 202;
        return presentDocument(row);
      },
      {
        body: UploadDocumentForm,
        parse: 'multipart/form-data',
        response: {
          202: DocumentResponse,
          ...errorResponses(401, 413, 415, 422),
        },
        detail: {
          operationId: 'uploadDocument',
          summary: 'Upload a document for avatars to answer from; it is processed in the background',
          description:
            'Answers 202 with the document `processing`; it becomes `ready` (a `document.ready` webhook) or `failed` with a `detail` saying what to change (`document.failed`). Attach it to an identity (`document_ids`) or a session start for its agent to answer from it.',
        },
      },
    )
    .get(
      '',
      ownedList(db, documents, presentDocument, {
        path: `${audience.prefix}/documents`,
        unknownAfter: 'after must be the document_id of a document in the list',
      }),
      {
        query: ListDocumentsQuery,
        response: { 200: t.Array(DocumentResponse), ...errorResponses(401, 422) },
        detail: { operationId: 'listDocuments', summary: "List the caller's documents, newest first" },
      },
    )
    .get('/:document_id', document.read, {
      params: DocumentParams,
      response: { 200: DocumentResponse, ...errorResponses(401, 404) },
      detail: { operationId: 'getDocument', summary: 'Read one document and its processing status' },
    })
    .delete(
      '/:document_id',
      document.remove((id) => {
        knowledge.processing.stop(id);
        forgetDocument(id);
      }),
      {
        params: DocumentParams,
        response: { 204: t.Void(), ...errorResponses(401, 404) },
        detail: {
          operationId: 'deleteDocument',
          summary: 'Delete a document and its passages',
          description:
            'It leaves every identity it was attached to, and running sessions stop retrieving from it from their next turn.',
        },
      },
    );
}

/** POST /internal/sessions/{id}/knowledge, behind the job door (src/auth/job-tokens.ts). */
export function knowledgeRoutes(deps: KnowledgeDeps) {
  const { db, knowledge } = deps;
  return new Elysia({ prefix: '/internal', detail: { hide: true } }).post(
    '/sessions/:session_id/knowledge',
    async ({ params, body, request }): Promise<KnowledgeAnswer> => {
      const session = await jobSession(db, request, params.session_id);
      const started = performance.now();
      const tookMs = () => Math.round(performance.now() - started);
      // An ended session's token retrieves nothing more; a job still finishing its last turn hears so.
      if (session.status === 'ended' || session.documentIds.length === 0) return { passages: [], took_ms: 0 };
      try {
        // The session's documents fixed at its start, each still the account's and ready (search.ts).
        const { passages, path } = await knowledge.search({
          accountId: session.accountId,
          documentIds: session.documentIds,
          query: body.query,
        });
        retrievalSeconds.observe({ path }, (performance.now() - started) / 1000);
        return { passages, took_ms: tookMs() };
      } catch (error) {
        if (!(error instanceof EmbeddingUnavailable)) throw error;
        log.error({ err: error, session_id: session.id }, 'a retrieval could not embed its question');
        throw new ApiError(503, 'The question could not be embedded; answer without the documents');
      }
    },
    { params: SessionParams, body: KnowledgeRequest, parse: 'json' },
  );
}
