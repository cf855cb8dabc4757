// Identities: the gallery (polling those in training), the create form, editing in place
// (a new photo or sample retrains) and deleting. The forms are in identity-forms.ts.
import { ApiError, api } from '../api.ts';
import { onConfirmedDelete } from '../confirmed-delete.ts';
import { h } from '../dom.ts';
import { errorBox, showError, whileBusy } from '../forms.ts';
import {
  type Identity,
  type IdentityListItem,
  type IdentityStatus,
  type IdentityStatusResponse,
  LANGUAGE_NAMES,
  type Voice,
} from '../resources.ts';
import { attachmentsSummary, loadAttachables } from './identity-attachments.ts';
import { editForm, identityCreateForm } from './identity-forms.ts';
import { type Page, pageHeading } from './page.ts';

const POLL_MS = 1500;
const STATUS_NAMES: Record<IdentityStatus, string> = {
  created: 'Created',
  training: 'Training…',
  ready: 'Ready',
  failed: 'Failed',
};

const isSettling = (status: IdentityStatus) => status === 'created' || status === 'training';

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a page built top to bottom as it shows, each handler beside the element it serves
export const identitiesPage: Page = async (context) => {
  const gallery = h('ul', { id: 'identity-gallery', class: 'gallery' });
  const galleryError = errorBox('identities-error');
  const announcer = h('p', {
    id: 'identities-status',
    class: 'visually-hidden',
    role: 'status',
    'aria-live': 'polite',
  });
  const empty = h(
    'p',
    { id: 'identities-empty', class: 'muted', hidden: true },
    'No identities yet. Create your first one below.',
  );
  const polls = new Map<string, ReturnType<typeof setInterval>>();
  context.signal.addEventListener('abort', () => polls.forEach((timer) => clearInterval(timer)));

  const [voices, attachables] = await Promise.all([
    api.get<Voice[]>('/console/api/voices').catch(() => [] as Voice[]),
    loadAttachables(),
  ]);

  const cardOf = (id: string) => gallery.querySelector<HTMLLIElement>(`li[data-identity-id="${CSS.escape(id)}"]`);
  const showEmptyState = () => (empty.hidden = gallery.children.length > 0);

  function put(identity: IdentityListItem, position: 'replace' | 'first' = 'replace'): void {
    const card = identityCard(identity);
    const existing = cardOf(identity.identity_id);
    if (existing) existing.replaceWith(card);
    else if (position === 'first') gallery.prepend(card);
    else gallery.append(card);
    showEmptyState();
    if (isSettling(identity.status)) watch(identity.identity_id);
  }

  /** Polls the status while training; on the way out, refreshes the card (its photo may be new). */
  function watch(id: string): void {
    if (polls.has(id)) return;
    const timer = setInterval(async () => {
      try {
        const { status, detail } = await api.get<IdentityStatusResponse>(
          `/console/api/identities/${encodeURIComponent(id)}/status`,
        );
        if (isSettling(status)) return;
        stopWatching(id);
        if (context.signal.aborted) return;
        const identity = await api.get<Identity>(`/console/api/identities/${encodeURIComponent(id)}`);
        put(identity);
        announcer.textContent =
          status === 'ready'
            ? `${identity.name} is ready to talk.`
            : `${identity.name}: ${STATUS_NAMES[status] ?? status}. ${detail ?? ''}`;
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) {
          stopWatching(id);
          cardOf(id)?.remove();
          showEmptyState();
        } // anything else is worth another try at the next tick
      }
    }, POLL_MS);
    polls.set(id, timer);
  }

  function stopWatching(id: string): void {
    clearInterval(polls.get(id));
    polls.delete(id);
  }

  function identityCard(identity: IdentityListItem): HTMLLIElement {
    const detail = 'detail' in identity ? (identity as Identity).detail : null;
    const talk = h('button', { type: 'button', 'data-testid': 'talk-identity' }, 'Talk');
    const edit = h('button', { type: 'button', class: 'secondary', 'data-testid': 'edit-identity' }, 'Edit');
    const remove = h('button', { type: 'button', class: 'danger', 'data-testid': 'delete-identity' }, 'Delete');
    talk.addEventListener('click', () =>
      context.navigate(`#/talk?identity=${encodeURIComponent(identity.identity_id)}`),
    );
    edit.addEventListener('click', () => void openEditor(identity.identity_id, edit));
    onConfirmedDelete(remove, {
      question: `Delete “${identity.name}”? Its photo, voice and settings are removed for good.`,
      action: 'Delete identity',
      path: `/console/api/identities/${encodeURIComponent(identity.identity_id)}`,
      busy: [remove],
      errorBox: galleryError,
      done: () => {
        stopWatching(identity.identity_id);
        cardOf(identity.identity_id)?.remove();
        showEmptyState();
        announcer.textContent = `${identity.name} was deleted.`;
      },
    });
    return h(
      'li',
      {
        class: 'identity-card card',
        'data-testid': 'identity-card',
        'data-identity-id': identity.identity_id,
        'data-status': identity.status,
      },
      h('img', {
        class: 'portrait',
        src: identity.image,
        alt: `Photo of ${identity.name}`,
        loading: 'lazy',
        width: 320,
        height: 320,
      }),
      h(
        'div',
        { class: 'card-body' },
        h('h3', null, identity.name),
        h('p', { class: 'muted' }, LANGUAGE_NAMES[identity.language] ?? identity.language),
        attachmentsSummary(identity),
        h(
          'span',
          { class: `badge status-${identity.status}`, 'data-testid': 'identity-status' },
          STATUS_NAMES[identity.status] ?? identity.status,
        ),
        detail && identity.status !== 'ready' ? h('p', { class: 'hint' }, detail) : null,
        h('div', { class: 'actions' }, identity.status === 'ready' ? talk : null, edit, remove),
      ),
    );
  }

  async function openEditor(id: string, opener: HTMLButtonElement): Promise<void> {
    document.getElementById('edit-identity-form')?.dispatchEvent(new Event('reset')); // one editor at a time
    let identity: Identity;
    let current: Awaited<ReturnType<typeof loadAttachables>>;
    try {
      // The tools and documents again: some may have been added since the page opened.
      [identity, current] = await whileBusy([opener], 'Loading…', () =>
        Promise.all([api.get<Identity>(`/console/api/identities/${encodeURIComponent(id)}`), loadAttachables()]),
      );
    } catch (error) {
      showError(galleryError, error);
      return;
    }
    const card = cardOf(id);
    if (!card) return;
    const editor = editForm(identity, voices, current, {
      saved: (updated) => {
        put(updated);
        void context.refreshAccount();
        announcer.textContent = isSettling(updated.status)
          ? `${updated.name} is retraining.`
          : `${updated.name} was saved.`;
        cardOf(id)?.querySelector<HTMLButtonElement>('[data-testid="edit-identity"]')?.focus();
      },
      cancelled: () => {
        put(identity);
        cardOf(id)?.querySelector<HTMLButtonElement>('[data-testid="edit-identity"]')?.focus();
      },
    });
    card.replaceChildren(editor);
    editor.querySelector<HTMLInputElement>('#edit-identity-name')?.focus();
  }

  const createForm = identityCreateForm(voices, attachables, context, (created) => {
    put(created, 'first');
    announcer.textContent = isSettling(created.status)
      ? `${created.name} is training.`
      : `${created.name} is ready to talk.`;
  });

  context.root.append(
    pageHeading('Identities'),
    h(
      'p',
      { class: 'lead' },
      'An identity is a face, a voice and a personality. Create one from a portrait photo and, optionally, a 10–30 second voice sample.',
    ),
    galleryError,
    announcer,
    empty,
    gallery,
    createForm,
  );

  try {
    const identities = await api.get<IdentityListItem[]>('/console/api/identities');
    for (const identity of identities) put(identity);
    showEmptyState();
  } catch (error) {
    showError(galleryError, error);
  }
};
