// Identities: the gallery (polling those in training), the create form, editing in place
// (a new photo or sample retrains) and deleting.
import { ApiError, api } from '../api.ts';
import { confirmAction } from '../confirm-dialog.ts';
import { h } from '../dom.ts';
import {
  clearError,
  clearFieldProblems,
  errorBox,
  field,
  select,
  showError,
  showFieldProblems,
  whileBusy,
} from '../forms.ts';
import { guardLanguage, presetIsMultilingual } from '../language-choice.ts';
import {
  type Identity,
  type IdentityListItem,
  type IdentityStatus,
  type IdentityStatusResponse,
  LANGUAGE_NAMES,
  LANGUAGES,
  type Voice,
} from '../resources.ts';
import { uploadableVoice, VOICE_FILE_TYPES } from '../voice-sample.ts';
import { type Page, type PageContext, pageHeading } from './page.ts';

const POLL_MS = 1500;
const IMAGE_TYPES = 'image/jpeg,image/png,image/webp';
const STATUS_NAMES: Record<IdentityStatus, string> = {
  created: 'Created',
  training: 'Training…',
  ready: 'Ready',
  failed: 'Failed',
};
const LANGUAGE_HINT = 'Every language but English needs a voice sample or a multilingual preset voice.';
const CREATE_LANGUAGE_HINT = `English, or Auto once the voice is multilingual. ${LANGUAGE_HINT}`;
const VOICE_CONFLICT = 'Choose either a voice sample or a preset voice, not both.';

const isSettling = (status: IdentityStatus) => status === 'created' || status === 'training';

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

  const voices = await api.get<Voice[]>('/console/api/voices').catch(() => [] as Voice[]);

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
    remove.addEventListener('click', async () => {
      if (
        !(await confirmAction(
          `Delete “${identity.name}”? Its photo, voice and settings are removed for good.`,
          'Delete identity',
        ))
      )
        return;
      try {
        await whileBusy([remove], 'Deleting…', () =>
          api.delete(`/console/api/identities/${encodeURIComponent(identity.identity_id)}`),
        );
        stopWatching(identity.identity_id);
        cardOf(identity.identity_id)?.remove();
        showEmptyState();
        announcer.textContent = `${identity.name} was deleted.`;
      } catch (error) {
        showError(galleryError, error);
      }
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
    try {
      identity = await whileBusy([opener], 'Loading…', () =>
        api.get<Identity>(`/console/api/identities/${encodeURIComponent(id)}`),
      );
    } catch (error) {
      showError(galleryError, error);
      return;
    }
    const card = cardOf(id);
    if (!card) return;
    const editor = editForm(identity, voices, {
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

  const createForm = identityCreateForm(voices, context, (created) => {
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

function languageSelect(id: string, selected: string): HTMLSelectElement {
  return select(
    id,
    'language',
    LANGUAGES.map((language) => [language, LANGUAGE_NAMES[language]]),
    selected,
  );
}

function voiceOptions(voices: Voice[]): [string, string][] {
  return voices.map((voice) => [
    voice.voice_id,
    `${voice.name}${voice.multilingual ? ' — multilingual' : ' — English only'}`,
  ]);
}

function identityCreateForm(voices: Voice[], context: PageContext, created: (identity: Identity) => void): HTMLElement {
  const name = h('input', { id: 'identity-name', name: 'name', required: true, maxlength: 200, autocomplete: 'off' });
  const prompt = h('textarea', {
    id: 'identity-prompt',
    name: 'prompt',
    required: true,
    maxlength: 20000,
    rows: 6,
    placeholder: 'You are Ada, a friendly guide to our museum. Keep answers short.',
  });
  const image = h('input', { id: 'identity-image', name: 'image', type: 'file', accept: IMAGE_TYPES, required: true });
  const audio = h('input', { id: 'identity-audio', name: 'audio', type: 'file', accept: VOICE_FILE_TYPES });
  // English until the voice can speak more (language-choice.ts).
  const language = languageSelect('identity-language', 'en');
  const voice = select(
    'identity-voice',
    'voice_id',
    [['', 'None: default voice, English only'], ...voiceOptions(voices)],
    '',
  );
  const submit = h('button', { type: 'submit', id: 'create-identity' }, 'Create identity');
  const error = errorBox('identity-form-error');
  const progress = h('p', { id: 'identity-form-status', class: 'muted', role: 'status', 'aria-live': 'polite' });
  const form = h(
    'form',
    { id: 'identity-form', class: 'card' },
    field('Name', name),
    field('Prompt (the personality)', prompt, 'The system prompt: who the identity is and how it should talk.'),
    field('Portrait photo', image, 'JPEG, PNG or WebP; one face, looking at the camera.'),
    field(
      'Voice sample (optional)',
      audio,
      'WAV, MP3 or M4A, or a browser recording (WebM, Ogg: converted to WAV here), up to 2 minutes; 10–30 seconds of clear speech is enough. Its voice is cloned.',
    ),
    field(
      'Preset voice (optional)',
      voice,
      voices.length
        ? 'Instead of a voice sample. With neither, the default English voice is used.'
        : 'Preset voices could not be loaded.',
    ),
    field('Language', language, CREATE_LANGUAGE_HINT),
    error,
    h('div', { class: 'actions' }, submit, progress),
  );
  const guard = guardLanguage({
    language,
    submit,
    follow: true,
    multilingual: () => Boolean(audio.files?.length) || presetIsMultilingual(voices, voice.value),
  });
  voice.addEventListener('change', guard.update);
  audio.addEventListener('change', guard.update);

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearError(error);
    clearFieldProblems(form);
    if (guard.blocked()) return;
    const imageFile = image.files?.[0];
    const audioFile = audio.files?.[0];
    if (!imageFile) return showError(error, 'Choose a portrait photo.');
    if (audioFile && voice.value) return showError(error, VOICE_CONFLICT);
    const body = new FormData();
    body.set('name', name.value.trim());
    body.set('prompt', prompt.value);
    body.set('image', imageFile);
    body.set('language', language.value);
    if (voice.value) body.set('voice_id', voice.value);
    progress.textContent = 'Uploading and training… this can take a minute.';
    try {
      if (audioFile) body.set('audio', await uploadableVoice(audioFile));
      const identity = await whileBusy([submit], 'Creating…', () =>
        api.post<Identity>('/console/api/identities', body),
      );
      progress.textContent = `${identity.name} was created.`;
      form.reset();
      created(identity);
      void context.refreshAccount();
    } catch (caught) {
      progress.textContent = '';
      showError(error, caught);
      showFieldProblems(form, caught);
    }
  });

  return h(
    'section',
    { class: 'create-identity', 'aria-labelledby': 'create-identity-title' },
    h('h2', { id: 'create-identity-title' }, 'New identity'),
    form,
  );
}

function editForm(
  identity: Identity,
  voices: Voice[],
  done: { saved: (identity: Identity) => void; cancelled: () => void },
): HTMLFormElement {
  const name = h('input', {
    id: 'edit-identity-name',
    name: 'name',
    required: true,
    maxlength: 200,
    value: identity.name,
    autocomplete: 'off',
  });
  const prompt = h(
    'textarea',
    { id: 'edit-identity-prompt', name: 'prompt', required: true, maxlength: 20000, rows: 6 },
    identity.prompt,
  );
  const language = languageSelect('edit-identity-language', identity.language);
  // A cloned voice (voice_id null) has no preset to preselect: "" keeps it.
  const voiceChoices: [string, string][] =
    identity.voice_id === null ? [['', 'Keep the cloned voice'], ...voiceOptions(voices)] : voiceOptions(voices);
  const voice = select('edit-identity-voice', 'voice_id', voiceChoices, identity.voice_id ?? '');
  const image = h('input', { id: 'edit-identity-image', name: 'image', type: 'file', accept: IMAGE_TYPES });
  const audio = h('input', { id: 'edit-identity-audio', name: 'audio', type: 'file', accept: VOICE_FILE_TYPES });
  const save = h('button', { type: 'submit', id: 'save-identity' }, 'Save');
  const cancel = h('button', { type: 'button', id: 'cancel-edit', class: 'secondary' }, 'Cancel');
  const error = errorBox('edit-identity-error');
  const progress = h('p', { class: 'muted', role: 'status', 'aria-live': 'polite' });
  const form = h(
    'form',
    { id: 'edit-identity-form', class: 'edit-form', 'aria-label': `Edit ${identity.name}` },
    h('h3', null, `Edit ${identity.name}`),
    field('Name', name),
    field('Prompt', prompt),
    field('Language', language, LANGUAGE_HINT),
    field('Preset voice', voice, 'Choosing a preset replaces the current voice.'),
    field('New portrait photo (optional)', image, 'A new photo retrains the identity.'),
    field('New voice sample (optional)', audio, 'A new sample retrains the identity and replaces its voice.'),
    error,
    h('div', { class: 'actions' }, save, cancel, progress),
  );
  // "" keeps the cloned voice, which is multilingual; any other value is a preset. Only a
  // warning here: saving charges nothing, and a rename must not wait for a new voice.
  const guard = guardLanguage({
    language,
    follow: false,
    multilingual: () => Boolean(audio.files?.length) || voice.value === '' || presetIsMultilingual(voices, voice.value),
  });
  voice.addEventListener('change', guard.update);
  audio.addEventListener('change', guard.update);

  // "reset" doubles as "close": another card's Edit sends it so only one editor is open.
  form.addEventListener('reset', (event) => {
    event.preventDefault();
    done.cancelled();
  });
  cancel.addEventListener('click', () => done.cancelled());
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearError(error);
    clearFieldProblems(form);
    const imageFile = image.files?.[0];
    const audioFile = audio.files?.[0];
    const voiceChanged = voice.value !== '' && voice.value !== identity.voice_id;
    if (audioFile && voiceChanged) return showError(error, VOICE_CONFLICT);
    const body = new FormData();
    if (name.value.trim() !== identity.name) body.set('name', name.value.trim());
    // Uploads require the prompt alongside (docs/api.md#identities-update).
    if (prompt.value !== identity.prompt || imageFile || audioFile) body.set('prompt', prompt.value);
    if (language.value !== identity.language) body.set('language', language.value);
    if (voiceChanged) body.set('voice_id', voice.value);
    if (imageFile) body.set('image', imageFile);
    if (audioFile) body.set('audio', audioFile);
    if ([...body.keys()].length === 0) return done.cancelled();
    progress.textContent = imageFile || audioFile ? 'Uploading…' : 'Saving…';
    try {
      if (audioFile) body.set('audio', await uploadableVoice(audioFile));
      const path = `/console/api/identities/${encodeURIComponent(identity.identity_id)}`;
      // The 202 (retrain) body is not specified, so the identity is read back either way.
      const updated = await whileBusy([save, cancel], 'Saving…', async () => {
        await api.patch(path, body);
        return api.get<Identity>(path);
      });
      done.saved(updated);
    } catch (caught) {
      progress.textContent = '';
      showError(error, caught);
      showFieldProblems(form, caught);
    }
  });
  return form;
}
