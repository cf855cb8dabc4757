// Talk's conversation: the avatar's video with the controls under it and the live transcript
// beside it (below it on a phone), laid out so the face, the controls and the latest turns
// fit one screen (src/console/web/styles/talk.css); a recorded session carries a "Recording" mark in the
// video's corner. The room itself is room.ts's.
import { api } from '../api.ts';
import { h, replaceChildren } from '../dom.ts';
import { clearError, showError, whileBusy } from '../forms.ts';
import type { SessionStart } from '../resources.ts';
import { ConnectionState, DisconnectReason, type SessionNotice, TalkRoom, type TranscriptSegment } from '../room.ts';

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
  idle: 'You were quiet for a while, so the session has ended. Start a new one to talk again.',
};

/** The agent's state (`lk.agent.state`) as the page shows it. */
const AGENT_STATES: Record<string, string> = {
  initializing: 'Getting ready',
  listening: 'Listening',
  thinking: 'Thinking…',
  speaking: 'Speaking',
};

/** Within this many pixels of the end, the reader counts as following the conversation. */
const FOLLOW_SLACK_PX = 40;

export interface Conversation {
  room: TalkRoom;
  roomName: string;
  ended: boolean;
}

export interface StageOptions {
  identityName: string;
  shape: string;
  /** Told once the conversation is on, so leaving the page can end it. */
  began(conversation: Conversation): void;
  /** The session ended: the balance in the top bar is worth refreshing. */
  ended(): void;
  /** "Start another session": the page shows its form again. */
  again(): void;
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a talk's stage built top to bottom as it shows, each room event beside the element it changes
export async function converse(stage: HTMLElement, session: SessionStart, options: StageOptions): Promise<void> {
  const { identityName } = options;
  const shape = options.shape === 'phone' ? 'portrait' : 'landscape';
  const endPath = `/console/api/sessions/${encodeURIComponent(session.room_name)}/end`;
  const state = h(
    'p',
    {
      id: 'connection-state',
      class: 'connection-state',
      role: 'status',
      'aria-live': 'polite',
      'data-state': 'starting',
    },
    STATE_NAMES.starting,
  );
  const agentState = h('p', { id: 'agent-state', class: 'agent-state', hidden: true });
  const notice = h('div', { id: 'notice', class: 'notice', 'aria-live': 'polite' });
  const mediaError = h('p', { id: 'media-error', class: 'error', role: 'alert', hidden: true });
  const video = h('video', {
    id: 'avatar-video',
    autoplay: true,
    playsinline: true,
    muted: true,
    'aria-label': `${identityName}, live video`,
  });
  video.muted = true; // the picture only: the voice plays from the single <audio> below
  const waiting = h('p', { class: 'video-waiting' }, `Waiting for ${identityName}…`);
  // The start's answer says it first; the room's metadata decides once joined.
  const recording = h(
    'p',
    { id: 'recording-mark', class: 'recording-mark', role: 'status', hidden: !session.record },
    h('span', { class: 'recording-dot', 'aria-hidden': 'true' }),
    'Recording',
  );
  const audio = h('audio', { id: 'avatar-audio', autoplay: true });
  const enableAudio = h('button', { type: 'button', id: 'enable-audio', hidden: true }, 'Click to enable audio');
  const microphone = h(
    'button',
    { type: 'button', id: 'mic-toggle', class: 'secondary', 'aria-pressed': 'true' },
    'Mute',
  );
  const camera = session.visual_awareness
    ? h('button', { type: 'button', id: 'camera-toggle', class: 'secondary', 'aria-pressed': 'false' }, 'Start camera')
    : null;
  const end = h('button', { type: 'button', id: 'end-session', class: 'danger' }, 'End');
  const again = h('button', { type: 'button', id: 'new-session', hidden: true }, 'Start another session');
  const transcript = h('ol', {
    id: 'transcript',
    class: 'transcript live',
    'aria-live': 'polite',
    'aria-label': 'Live transcript',
    tabindex: 0,
  });
  const segments = new Map<string, HTMLLIElement>();

  replaceChildren(
    stage,
    h(
      'div',
      { class: 'stage-media' },
      h('div', { class: 'stage-status' }, state, agentState, notice),
      mediaError,
      h(
        'div',
        { class: `video-area ${shape}` },
        h('div', { class: `video-frame ${shape}` }, video, waiting, recording),
      ),
      audio,
      h('div', { class: 'actions controls' }, enableAudio, microphone, camera, end, again),
    ),
    h('div', { class: 'stage-transcript' }, h('h2', null, 'Transcript'), transcript),
  );
  stage.hidden = false;

  const room = new TalkRoom(video, audio, {
    connectionState: (value) => setState(value),
    audioBlocked: (blocked) => (enableAudio.hidden = !blocked),
    avatarVideo: (present) => (waiting.hidden = present),
    notice: (received) => showNotice(received),
    transcript: (segment) => showSegment(segment),
    agentState: (value) => {
      agentState.hidden = false;
      agentState.dataset.state = value;
      agentState.textContent = `${identityName}: ${AGENT_STATES[value] ?? value}`;
    },
    recording: (recorded) => (recording.hidden = !recorded),
    disconnected: (reason) => finished(reason),
  });
  const current: Conversation = { room, roomName: session.room_name, ended: false };
  options.began(current);

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
    // Measured before the list grows: after, a reader at the end would seem to have scrolled up.
    const following = transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < FOLLOW_SLACK_PX;
    let item = segments.get(segment.id);
    if (!item) {
      item = h(
        'li',
        { class: segment.fromVisitor ? 'turn turn-visitor' : 'turn turn-agent' },
        h('span', { class: 'speaker' }, segment.fromVisitor ? 'You' : identityName),
        h('span', { class: 'text' }),
      );
      segments.set(segment.id, item);
      transcript.append(item);
    }
    item.querySelector('.text')!.textContent = segment.text;
    item.classList.toggle('interim', !segment.final);
    if (following) transcript.scrollTop = transcript.scrollHeight;
  }

  function finished(reason: DisconnectReason | undefined): void {
    current.ended = true;
    // The picture has gone: its room goes to the transcript, to read back.
    stage.classList.add('ended');
    setState(ConnectionState.Disconnected);
    agentState.hidden = true;
    recording.hidden = true;
    waiting.textContent = 'The session has ended.';
    if (!notice.textContent) {
      notice.textContent =
        reason === DisconnectReason.CLIENT_INITIATED ? 'You ended the session.' : 'The session has ended.';
    }
    for (const button of [enableAudio, microphone, camera, end]) if (button) button.hidden = true;
    again.hidden = false;
    options.ended();
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
    microphone.textContent = on ? 'Mute' : 'Unmute';
  });
  camera?.addEventListener('click', async () => {
    const on = camera.getAttribute('aria-pressed') !== 'true';
    const problem = await whileBusy([camera], on ? 'Starting camera…' : 'Stopping camera…', () => room.setCamera(on));
    if (problem) return showError(mediaError, problem);
    clearError(mediaError);
    camera.setAttribute('aria-pressed', String(on));
    camera.textContent = on ? 'Stop camera' : 'Start camera';
  });
  end.addEventListener('click', async () => {
    current.ended = true;
    // Leave first: the page hangs up cleanly instead of having the room closed under it.
    await room.leave();
    try {
      await whileBusy([end], 'Ending…', () => api.post(endPath));
    } catch (error) {
      // Leaving the room has ended the session anyway (as "visitor left").
      showError(
        mediaError,
        `Ending the session on the server failed (${error instanceof Error ? error.message : String(error)}); leaving the room ends it too.`,
      );
    }
  });
  again.addEventListener('click', () => {
    stage.hidden = true;
    stage.classList.remove('ended');
    replaceChildren(stage);
    options.again();
  });

  try {
    const { microphoneProblem } = await room.join(session.rtc_url, session.token);
    if (microphoneProblem) {
      showError(mediaError, microphoneProblem);
      microphone.setAttribute('aria-pressed', 'false');
      microphone.textContent = 'Unmute';
    }
  } catch (error) {
    showError(mediaError, `Could not join the conversation: ${error instanceof Error ? error.message : String(error)}`);
    void api.post(endPath).catch(() => undefined);
    finished(undefined);
  }
}
