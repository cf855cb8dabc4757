// The identity's forms: creating one (photo, optional voice sample or preset, language, and its
// tools and documents) and editing one in place (a new photo or sample retrains).
import { api } from '../api.ts';
import { h } from '../dom.ts';
import { errorBox, field, onSubmit, select, showError, statusLine, whileBusy } from '../forms.ts';
import { guardLanguage, presetIsMultilingual } from '../language-choice.ts';
import { type Identity, LANGUAGE_NAMES, LANGUAGES, type Voice } from '../resources.ts';
import { uploadableVoice, VOICE_FILE_TYPES } from '../voice-sample.ts';
import { type Attachables, attachedOf, attachmentPicker } from './identity-attachments.ts';
import type { PageContext } from './page.ts';

const IMAGE_TYPES = 'image/jpeg,image/png,image/webp';
const LANGUAGE_HINT = 'Every language but English needs a voice sample or a multilingual preset voice.';
const CREATE_LANGUAGE_HINT = `English, or Auto once the voice is multilingual. ${LANGUAGE_HINT}`;
const VOICE_CONFLICT = 'Choose either a voice sample or a preset voice, not both.';

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

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a form built field by field as it shows, its checks beside each field
export function identityCreateForm(
  voices: Voice[],
  attachables: Attachables,
  context: PageContext,
  created: (identity: Identity) => void,
): HTMLElement {
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
  const attachments = attachmentPicker('identity', attachables);
  const submit = h('button', { type: 'submit', id: 'create-identity' }, 'Create identity');
  const error = errorBox('identity-form-error');
  const progress = statusLine('identity-form-status');
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
    attachments.element,
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

  onSubmit(
    form,
    error,
    async () => {
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
      attachments.addTo(body);
      progress.textContent = 'Uploading and training… this can take a minute.';
      if (audioFile) body.set('audio', await uploadableVoice(audioFile));
      const identity = await whileBusy([submit], 'Creating…', () =>
        api.post<Identity>('/console/api/identities', body),
      );
      progress.textContent = `${identity.name} was created.`;
      form.reset();
      created(identity);
      void context.refreshAccount();
    },
    (caught) => {
      progress.textContent = '';
      return caught;
    },
  );

  return h(
    'section',
    { class: 'create-identity', 'aria-labelledby': 'create-identity-title' },
    h('h2', { id: 'create-identity-title' }, 'New identity'),
    form,
  );
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a form built field by field as it shows, its checks beside each field
export function editForm(
  identity: Identity,
  voices: Voice[],
  attachables: Attachables,
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
  const attached = attachedOf(identity);
  const attachments = attachmentPicker('edit-identity', attachables, attached);
  const save = h('button', { type: 'submit', id: 'save-identity' }, 'Save');
  const cancel = h('button', { type: 'button', id: 'cancel-edit', class: 'secondary' }, 'Cancel');
  const error = errorBox('edit-identity-error');
  const progress = statusLine();
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
    attachments.element,
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
  onSubmit(
    form,
    error,
    async () => {
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
      attachments.addTo(body, attached);
      if ([...body.keys()].length === 0) return done.cancelled();
      progress.textContent = imageFile || audioFile ? 'Uploading…' : 'Saving…';
      if (audioFile) body.set('audio', await uploadableVoice(audioFile));
      const path = `/console/api/identities/${encodeURIComponent(identity.identity_id)}`;
      // The 202 (retrain) body is not specified, so the identity is read back either way.
      const updated = await whileBusy([save, cancel], 'Saving…', async () => {
        await api.patch(path, body);
        return api.get<Identity>(path);
      });
      done.saved(updated);
    },
    (caught) => {
      progress.textContent = '';
      return caught;
    },
  );
  return form;
}
