// Talk: start a session on one of your ready identities and talk to it here. The server
// starts the session with the account's key; the browser only gets the room and its token.
import { api, ApiError } from '../api.ts';
import { h, replaceChildren } from '../dom.ts';
import { checkboxField, clearError, errorBox, field, select, showError, whileBusy } from '../forms.ts';
import { LANGUAGE_NAMES, LANGUAGES, type IdentityListItem, type SessionStart } from '../resources.ts';
import { ConnectionState, DisconnectReason, TalkRoom, type SessionNotice, type TranscriptSegment } from '../room.ts';
import { pageHeading, type Page } from './page.ts';

const STATE_NAMES: Record<string, string> = {
  starting: 'Starting session…',
  [ConnectionState.Connecting]: 'Connecting…',
  [ConnectionState.Connected]: 'Connected',
  [ConnectionState.Reconnecting]: 'Reconnecting…',
  [ConnectionState.SignalReconnecting]: 'Reconnecting…',
  [ConnectionState.Disconnected]: 'Disconnected',
};

const NOTICES: Record<string, string> = {
  insufficient_credits: 'Your credits ran out, so the session has ended. Add credits to talk again.',
  agent_unavailable: 'The agent could not join, so the session has ended without a charge. Try again in a moment.',
  service_restarting: 'The service is restarting, so the session has ended. Start a new one in a moment.',
};

export const talkPage: Page = async (context) => {
  const setupError = errorBox('talk-error');
  context.root.append(pageHeading('Talk'), setupError);

  let identities: IdentityListItem[];
  try {
    identities = (await api.get<IdentityListItem[]>('/console/api/identities')).filter((identity) => identity.status === 'ready');
  } catch (error) {
    showError(setupError, error);
    return;
  }
  if (identities.length === 0) {
    context.root.append(
      h('p', { class: 'lead' }, 'None of your identities is ready to talk yet. ', h('a', { href: '#/identities' }, 'Create or check your identities'), '.'),
    );
    return;
  }

  const asked = context.query.get('identity');
  const identity = select('talk-identity', 'identity_id', identities.map((item) => [item.identity_id, item.name]), identities.some((item) => item.identity_id === asked) ? (asked ?? undefined) : undefined);
  const language = h('select', { id: 'talk-language', name: 'language' });
  const formFactor = select('talk-form-factor', 'form_factor', [['phone', 'Phone (portrait video)'], ['desktop', 'Desktop (landscape video)']], window.matchMedia('(max-width: 700px)').matches ? 'phone' : 'desktop');
  const visualAwareness = h('input', { id: 'talk-visual-awareness', name: 'visual_awareness', type: 'checkbox', checked: true });
  const start = h('button', { type: 'submit', id: 'start-talk' }, 'Start');
  const form = h(
    'form',
    { id: 'talk-form', class: 'card' },
    field('Identity', identity),
    field('Language', language),
    field('Video shape', formFactor),
    checkboxField('Visual awareness (the identity can see your camera when you turn it on)', visualAwareness),
    h('div', { class: 'actions' }, start),
  );
  const selected = () => identities.find((item) => item.identity_id === identity.value) ?? identities[0]!;
  const fillLanguages = () => {
    const current = language.value;
    replaceChildren(
      language,
      h('option', { value: '' }, `Identity default (${LANGUAGE_NAMES[selected().language] ?? selected().language})`),
      ...LANGUAGES.map((code) => h('option', { value: code, selected: code === current }, LANGUAGE_NAMES[code])),
    );
  };
  fillLanguages();
  identity.addEventListener('change', fillLanguages);
  if (asked && !identities.some((item) => item.identity_id === asked)) showError(setupError, 'That identity is not ready to talk (or no longer exists). Choose another.');

  const stage = h('section', { id: 'talk-stage', 'aria-label': 'Conversation', hidden: true });
  context.root.append(form, stage);

  let active: { room: TalkRoom; roomName: string; ended: boolean } | null = null;

  // Leaving the page or the tab ends the conversation: a room nobody is in only costs.
  const endOnExit = () => void active?.room.leave();
  window.addEventListener('pagehide', endOnExit);
  context.signal.addEventListener('abort', () => {
    window.removeEventListener('pagehide', endOnExit);
    if (active && !active.ended) void api.post(`/console/api/sessions/${encodeURIComponent(active.roomName)}/end`).catch(() => undefined);
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
    let session: SessionStart;
    try {
      session = await whileBusy([start], 'Starting…', () => api.post<SessionStart>('/console/api/sessions/start', body));
    } catch (error) {
      showError(setupError, explainStartError(error));
      return;
    }
    if (context.signal.aborted) {
      void api.post(`/console/api/sessions/${encodeURIComponent(session.room_name)}/end`).catch(() => undefined);
      return;
    }
    form.hidden = true;
    await converse(session, chosen.name, formFactor.value);
  });

  async function converse(session: SessionStart, identityName: string, shape: string): Promise<void> {
    const state = h('p', { id: 'connection-state', class: 'connection-state', role: 'status', 'aria-live': 'polite', 'data-state': 'starting' }, STATE_NAMES.starting);
    const notice = h('div', { id: 'notice', class: 'notice', 'aria-live': 'polite' });
    const mediaError = h('p', { id: 'media-error', class: 'error', role: 'alert', hidden: true });
    const video = h('video', { id: 'avatar-video', autoplay: true, playsinline: true, muted: true, 'aria-label': `${identityName}, live video` });
    video.muted = true; // the picture only: the voice plays from the single <audio> below
    const waiting = h('p', { class: 'video-waiting' }, `Waiting for ${identityName}…`);
    const audio = h('audio', { id: 'avatar-audio', autoplay: true });
    const enableAudio = h('button', { type: 'button', id: 'enable-audio', hidden: true }, 'Click to enable audio');
    const microphone = h('button', { type: 'button', id: 'mic-toggle', class: 'secondary', 'aria-pressed': 'true' }, 'Mute microphone');
    const camera = session.visual_awareness ? h('button', { type: 'button', id: 'camera-toggle', class: 'secondary', 'aria-pressed': 'false' }, 'Turn camera on') : null;
    const end = h('button', { type: 'button', id: 'end-session', class: 'danger' }, 'End');
    const again = h('button', { type: 'button', id: 'new-session', hidden: true }, 'Start another session');
    const transcript = h('ol', { id: 'transcript', class: 'transcript live', 'aria-live': 'polite', 'aria-label': 'Live transcript' });
    const segments = new Map<string, HTMLLIElement>();

    replaceChildren(
      stage,
      h('div', { class: 'stage-status' }, state, notice),
      mediaError,
      h('div', { class: `video-frame ${shape === 'phone' ? 'portrait' : 'landscape'}` }, video, waiting),
      audio,
      h('div', { class: 'actions controls' }, enableAudio, microphone, camera, end, again),
      h('h2', null, 'Transcript'),
      transcript,
    );
    stage.hidden = false;

    const room = new TalkRoom(video, audio, {
      connectionState: (value) => setState(value),
      audioBlocked: (blocked) => (enableAudio.hidden = !blocked),
      avatarVideo: (present) => (waiting.hidden = present),
      notice: (received) => showNotice(received),
      transcript: (segment) => showSegment(segment),
      disconnected: (reason) => finished(reason),
    });
    const current = { room, roomName: session.room_name, ended: false };
    active = current;

    function setState(value: string): void {
      state.dataset.state = value;
      state.textContent = STATE_NAMES[value] ?? value;
    }

    function showNotice(received: SessionNotice): void {
      notice.dataset.type = received.type;
      notice.textContent = NOTICES[received.type] ?? `Notice from the service: ${received.type}`;
      notice.classList.add('shown');
    }

    function showSegment(segment: TranscriptSegment): void {
      let item = segments.get(segment.id);
      if (!item) {
        item = h('li', { class: segment.fromVisitor ? 'turn turn-visitor' : 'turn turn-agent' }, h('span', { class: 'speaker' }, segment.fromVisitor ? 'You' : identityName), h('span', { class: 'text' }));
        segments.set(segment.id, item);
        transcript.append(item);
      }
      // Follow new words only when the reader is already at the bottom of the list.
      const following = transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 40;
      item.querySelector('.text')!.textContent = segment.text;
      item.classList.toggle('interim', !segment.final);
      if (following) transcript.scrollTop = transcript.scrollHeight;
    }

    function finished(reason: DisconnectReason | undefined): void {
      current.ended = true;
      setState(ConnectionState.Disconnected);
      waiting.textContent = 'The session has ended.';
      if (!notice.textContent) {
        notice.textContent = reason === DisconnectReason.CLIENT_INITIATED ? 'You ended the session.' : 'The session has ended.';
      }
      for (const button of [enableAudio, microphone, camera, end]) if (button) button.hidden = true;
      again.hidden = false;
      void context.refreshAccount();
    }

    enableAudio.addEventListener('click', async () => {
      await room.startAudio().catch(() => undefined);
      enableAudio.hidden = true;
    });
    microphone.addEventListener('click', async () => {
      const on = microphone.getAttribute('aria-pressed') !== 'true';
      const problem = await room.setMicrophone(on);
      if (problem) return showError(mediaError, problem);
      clearError(mediaError);
      microphone.setAttribute('aria-pressed', String(on));
      microphone.textContent = on ? 'Mute microphone' : 'Unmute microphone';
    });
    camera?.addEventListener('click', async () => {
      const on = camera.getAttribute('aria-pressed') !== 'true';
      const problem = await whileBusy([camera], on ? 'Starting camera…' : 'Stopping camera…', () => room.setCamera(on));
      if (problem) return showError(mediaError, problem);
      clearError(mediaError);
      camera.setAttribute('aria-pressed', String(on));
      camera.textContent = on ? 'Turn camera off' : 'Turn camera on';
    });
    end.addEventListener('click', async () => {
      current.ended = true;
      // Leave first: the page hangs up cleanly instead of having the room closed under it.
      await room.leave();
      try {
        await whileBusy([end], 'Ending…', () => api.post(`/console/api/sessions/${encodeURIComponent(session.room_name)}/end`));
      } catch (error) {
        // Leaving the room has ended the session anyway (as "visitor left").
        showError(mediaError, `Ending the session on the server failed (${error instanceof Error ? error.message : String(error)}); leaving the room ends it too.`);
      }
    });
    again.addEventListener('click', () => {
      stage.hidden = true;
      replaceChildren(stage);
      form.hidden = false;
      start.focus();
    });

    try {
      const { microphoneProblem } = await room.join(session.rtc_url, session.token);
      if (microphoneProblem) {
        showError(mediaError, microphoneProblem);
        microphone.setAttribute('aria-pressed', 'false');
        microphone.textContent = 'Unmute microphone';
      }
    } catch (error) {
      showError(mediaError, `Could not join the conversation: ${error instanceof Error ? error.message : String(error)}`);
      void api.post(`/console/api/sessions/${encodeURIComponent(session.room_name)}/end`).catch(() => undefined);
      finished(undefined);
    }
  }
};

function explainStartError(error: unknown): unknown {
  if (!(error instanceof ApiError)) return error;
  if (error.status === 402) return `Not enough credits to start a session. ${error.message}`;
  if (error.status === 409) return `This identity is not ready yet. ${error.message}`;
  return error;
}
