// Knowledge: the account's documents an identity's agent answers from (docs/api.md#documents).
// Upload one (it is split and embedded in the background: the list follows it until it is ready
// or failed, and says why it failed), see each one's passages, delete one; identities pick
// theirs on the Identities page (identity-attachments.ts).
import { api } from '../api.ts';
import { onConfirmedDelete } from '../confirmed-delete.ts';
import { h, replaceChildren } from '../dom.ts';
import { formatDate } from '../format.ts';
import { clearError, errorBox, field, onSubmit, showError, whileBusy } from '../forms.ts';
import { newestAnswer } from '../newest-answer.ts';
import type { DocumentStatus, KnowledgeDocument } from '../resources.ts';
import { cell, dataTable, rowButton } from '../table.ts';
import { type Page, pageHeading } from './page.ts';

/** How often the list is read again while a document is processing. */
const POLL_MS = 1500;
export const DOCUMENT_FILE_TYPES =
  '.txt,.md,.markdown,.html,.htm,.pdf,text/plain,text/markdown,text/html,application/pdf';
export const DOCUMENT_STATUS_NAMES: Record<DocumentStatus, string> = {
  processing: 'Processing…',
  ready: 'Ready',
  failed: 'Failed',
};
/** The status badges' colours: processing looks like an identity in training. */
const STATUS_CLASSES: Record<DocumentStatus, string> = {
  processing: 'status-training',
  ready: 'status-ready',
  failed: 'status-failed',
};

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a page built top to bottom as it shows, each handler beside the element it serves
export const knowledgePage: Page = async (context) => {
  const file = h('input', {
    id: 'document-file',
    name: 'file',
    type: 'file',
    accept: DOCUMENT_FILE_TYPES,
    required: true,
  });
  const name = h('input', {
    id: 'document-name',
    name: 'name',
    maxlength: 200,
    autocomplete: 'off',
    placeholder: 'The file’s name when left empty',
  });
  const upload = h('button', { type: 'submit', id: 'upload-document' }, 'Upload');
  const formError = errorBox('document-form-error');
  const form = h(
    'form',
    { id: 'document-form', class: 'card' },
    field('Document', file, 'Text, Markdown, HTML or PDF, up to 10 MB.'),
    field('Name (optional)', name),
    h('div', { class: 'actions' }, upload),
    formError,
  );
  const listError = errorBox('documents-error');
  const announcer = h('p', { id: 'documents-status', class: 'visually-hidden', role: 'status', 'aria-live': 'polite' });
  const list = h('div', { id: 'documents-list' }, h('p', { class: 'muted' }, 'Loading…'));

  let poll: ReturnType<typeof setTimeout> | undefined;
  context.signal.addEventListener('abort', () => clearTimeout(poll));
  /** Statuses last shown, to announce a document that settled. */
  const shown = new Map<string, DocumentStatus>();

  const ask = newestAnswer();
  async function load(): Promise<void> {
    const newest = ask();
    clearTimeout(poll);
    try {
      const data = await api.get<KnowledgeDocument[]>('/console/api/documents');
      if (!newest()) return;
      if (context.signal.aborted) return;
      clearError(listError);
      announceSettled(data);
      replaceChildren(
        list,
        data.length
          ? dataTable(
              'documents-table',
              'Your documents',
              ['Name', 'Status', 'Passages', 'Size', 'Added', 'Actions'],
              data.map(documentRow),
            )
          : h('p', { class: 'muted' }, 'No documents yet.'),
      );
      if (data.some((d) => d.status === 'processing')) poll = setTimeout(() => void load(), POLL_MS);
    } catch (error) {
      if (context.signal.aborted) return;
      showError(listError, error);
      poll = setTimeout(() => void load(), POLL_MS * 4); // the server may be back by then
    }
  }

  function announceSettled(documents: KnowledgeDocument[]): void {
    for (const d of documents) {
      if (shown.get(d.document_id) === 'processing' && d.status !== 'processing')
        announcer.textContent =
          d.status === 'ready' ? `${d.name} is ready.` : `${d.name} could not be processed. ${d.detail ?? ''}`;
      shown.set(d.document_id, d.status);
    }
  }

  function documentRow(d: KnowledgeDocument): HTMLTableRowElement {
    const remove = rowButton('Delete', 'delete-document', 'danger');
    onConfirmedDelete(remove, {
      question: `Delete “${d.name}”? Its passages are removed, and identities that use it no longer answer from it.`,
      action: 'Delete document',
      path: `/console/api/documents/${encodeURIComponent(d.document_id)}`,
      busy: [remove],
      errorBox: listError,
      done: () => {
        shown.delete(d.document_id);
        announcer.textContent = `${d.name} was deleted.`;
        return load();
      },
    });
    return h(
      'tr',
      { 'data-document-id': d.document_id, 'data-status': d.status },
      cell('Name', d.name, h('div', { class: 'muted' }, d.content_type)),
      cell(
        'Status',
        h(
          'span',
          { class: `badge ${STATUS_CLASSES[d.status] ?? ''}`, 'data-testid': 'document-status' },
          DOCUMENT_STATUS_NAMES[d.status] ?? d.status,
        ),
        d.status === 'failed' && d.detail
          ? h('p', { class: 'hint', 'data-testid': 'document-detail' }, d.detail)
          : null,
      ),
      cell('Passages', d.status === 'ready' ? String(d.chunks) : '—'),
      cell('Size', formatBytes(d.bytes)),
      cell('Added', formatDate(d.created_at)),
      cell('Actions', h('div', { class: 'actions' }, remove)),
    );
  }

  onSubmit(form, formError, async () => {
    const chosen = file.files?.[0];
    if (!chosen) return showError(formError, 'Choose a file to upload.');
    const body = new FormData();
    body.set('file', chosen);
    if (name.value.trim()) body.set('name', name.value.trim());
    const created = await whileBusy([upload], 'Uploading…', () =>
      api.post<KnowledgeDocument>('/console/api/documents', body),
    );
    form.reset();
    shown.set(created.document_id, 'processing');
    announcer.textContent = `${created.name} was uploaded and is being processed.`;
    await load();
  });

  context.root.append(
    pageHeading('Knowledge'),
    h(
      'p',
      { class: 'lead' },
      'Documents an identity answers from: each turn, the passages closest to what the visitor said are given to its agent. Choose each identity’s documents on the Identities page.',
    ),
    form,
    announcer,
    listError,
    list,
  );
  await load();
};

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
