// Talk: start a session on one of your ready identities and talk to it here. The server
// starts the session with the account's key; the browser only gets the room and its token.
// Nothing starts until the microphone answers, and the language menu offers only what the
// identity's voice can speak (docs/api.md#languages).
import { ApiError, api } from '../api.ts';
import { h, replaceChildren } from '../dom.ts';
import { checkboxField, clearError, errorBox, field, select, showError, whileBusy } from '../forms.ts';
import { presetIsMultilingual } from '../language-choice.ts';
import { insecurePage, type MicrophoneProblem, microphoneProblem } from '../microphone.ts';
import {
  type Identity,
  type IdentityListItem,
  LANGUAGE_NAMES,
  LANGUAGES,
  type SessionStart,
  type Voice,
} from '../resources.ts';
import { type Page, pageHeading } from './page.ts';
import { type Conversation, converse } from './talk-stage.ts';

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a page built top to bottom as it shows, each handler beside the element it serves
export const talkPage: Page = async (context) => {
  const setupError = errorBox('talk-error');
  context.root.append(pageHeading('Talk'), setupError);

  let identities: IdentityListItem[];
  try {
    identities = (await api.get<IdentityListItem[]>('/console/api/identities')).filter(
      (identity) => identity.status === 'ready',
    );
  } catch (error) {
    showError(setupError, error);
    return;
  }
  if (identities.length === 0) {
    context.root.append(
      h(
        'p',
        { class: 'lead' },
        'None of your identities is ready to talk yet. ',
        h('a', { href: '#/identities' }, 'Create or check your identities'),
        '.',
      ),
    );
    return;
  }

  const asked = context.query.get('identity');
  const identity = select(
    'talk-identity',
    'identity_id',
    identities.map((item) => [item.identity_id, item.name]),
    identities.some((item) => item.identity_id === asked) ? (asked ?? undefined) : undefined,
  );
  const language = h('select', { id: 'talk-language', name: 'language' });
  const languageNote = h('p', { id: 'talk-language-note', class: 'hint', hidden: true });
  const formFactor = select(
    'talk-form-factor',
    'form_factor',
    [
      ['phone', 'Phone (portrait video)'],
      ['desktop', 'Desktop (landscape video)'],
    ],
    window.matchMedia('(max-width: 700px)').matches ? 'phone' : 'desktop',
  );
  const visualAwareness = h('input', {
    id: 'talk-visual-awareness',
    name: 'visual_awareness',
    type: 'checkbox',
    checked: true,
  });
  const start = h('button', { type: 'submit', id: 'start-talk' }, 'Start');
  const languageField = field('Language', language);
  languageField.append(languageNote);
  const form = h(
    'form',
    { id: 'talk-form', class: 'card' },
    field('Identity', identity),
    languageField,
    field('Video shape', formFactor),
    checkboxField('Visual awareness (the identity can see your camera when you turn it on)', visualAwareness),
    h('div', { class: 'actions' }, start),
  );
  const selected = () => identities.find((item) => item.identity_id === identity.value) ?? identities[0]!;

  // Whether each identity's voice is multilingual, read once per identity (the list leaves the voice out).
  const voices = api.get<Voice[]>('/console/api/voices').catch(() => null);
  const multilingualVoices = new Map<string, Promise<boolean | null>>();
  const speaksEveryLanguage = (id: string) => {
    let known = multilingualVoices.get(id);
    if (!known) {
      known = Promise.all([api.get<Identity>(`/console/api/identities/${encodeURIComponent(id)}`), voices])
        .then(([details, presets]) =>
          details.voice_id === null ? true : presets ? presetIsMultilingual(presets, details.voice_id) : null,
        )
        .catch(() => null);
      multilingualVoices.set(id, known);
    }
    return known;
  };

  /** `multilingual` null: not known (yet), every mode is offered and the server decides. */
  const fillLanguages = (multilingual: boolean | null) => {
    const chosen = selected();
    const speaks = (code: string) => multilingual !== false || code === 'en';
    const current = language.value;
    const keep = current === '' ? speaks(chosen.language) : speaks(current);
    const value = keep ? current : speaks(chosen.language) ? '' : 'en';
    const option = (code: string, label: string) => {
      const usable = speaks(code === '' ? chosen.language : code);
      return h(
        'option',
        { value: code, selected: code === value, disabled: !usable },
        usable ? label : `${label} — needs a multilingual voice`,
      );
    };
    replaceChildren(
      language,
      option('', `Identity default (${LANGUAGE_NAMES[chosen.language] ?? chosen.language})`),
      ...LANGUAGES.map((code) => option(code, LANGUAGE_NAMES[code])),
    );
    languageNote.hidden = multilingual !== false;
    replaceChildren(
      languageNote,
      multilingual === false
        ? [
            `${chosen.name}’s voice speaks English only, so it talks in English. For other languages, `,
            h('a', { href: '#/identities' }, 'edit the identity'),
            ': pick a multilingual preset voice or upload a voice sample.',
          ]
        : [],
    );
  };
  const showLanguages = async () => {
    const id = identity.value;
    fillLanguages(null);
    const multilingual = await speaksEveryLanguage(id);
    if (identity.value === id && !context.signal.aborted) fillLanguages(multilingual);
  };
  void showLanguages();
  identity.addEventListener('change', () => void showLanguages());
  if (asked && !identities.some((item) => item.identity_id === asked))
    showError(setupError, 'That identity is not ready to talk (or no longer exists). Choose another.');

  // Over plain HTTP on another machine the browser will not give the microphone: say so at once.
  const insecure = insecurePage();
  if (insecure) {
    showProblem(setupError, insecure);
    start.disabled = true;
  }

  const stage = h('section', { id: 'talk-stage', class: 'talk-stage', 'aria-label': 'Conversation', hidden: true });
  context.root.append(form, stage);

  let active: Conversation | null = null;

  // Leaving the page or the tab ends the conversation: a room nobody is in only costs.
  const endOnExit = () => void active?.room.leave();
  window.addEventListener('pagehide', endOnExit);
  context.signal.addEventListener('abort', () => {
    window.removeEventListener('pagehide', endOnExit);
    if (active && !active.ended)
      void api.post(`/console/api/sessions/${encodeURIComponent(active.roomName)}/end`).catch(() => undefined);
    endOnExit();
  });

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearError(setupError);
    const chosen = selected();
    const body = {
      identity_id: chosen.identity_id,
      ...(language.value ? { language: language.value } : {}),
      form_factor: formFactor.value,
      visual_awareness: visualAwareness.checked,
    };
    // No session, and no charge, for a visitor who cannot speak.
    const microphone = await whileBusy([start], 'Asking for the microphone…', microphoneProblem);
    if (microphone) {
      showProblem(setupError, microphone);
      start.disabled = insecure !== null;
      return;
    }
    if (context.signal.aborted) return;
    let session: SessionStart;
    try {
      session = await whileBusy([start], 'Starting…', () =>
        api.post<SessionStart>('/console/api/sessions/start', body),
      );
    } catch (error) {
      showError(setupError, explainStartError(error));
      return;
    }
    if (context.signal.aborted) {
      void api.post(`/console/api/sessions/${encodeURIComponent(session.room_name)}/end`).catch(() => undefined);
      return;
    }
    form.hidden = true;
    context.root.classList.add('talking');
    await converse(stage, session, {
      identityName: chosen.name,
      shape: formFactor.value,
      began: (conversation) => (active = conversation),
      ended: () => void context.refreshAccount(),
      again: () => {
        context.root.classList.remove('talking');
        form.hidden = false;
        start.focus();
      },
    });
  });
};

function showProblem(box: HTMLElement, problem: MicrophoneProblem): void {
  replaceChildren(
    box,
    problem.message,
    problem.link ? h('a', { class: 'problem-link', href: problem.link.href }, problem.link.text) : null,
  );
  box.hidden = false;
}

function explainStartError(error: unknown): unknown {
  if (!(error instanceof ApiError)) return error;
  if (error.status === 402) return `Not enough credits to start a session. ${error.message}`;
  if (error.status === 409) return `This identity is not ready yet. ${error.message}`;
  return error;
}
