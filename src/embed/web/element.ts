// <likeness-avatar>, the embeddable avatar (/embed.js). A call button; on click it checks the
// microphone, starts a session with the publishable key (start.ts), fetches the LiveKit chunk
// (call.ts) and joins the room: the avatar's video with captions of both sides, Mute, End,
// and a camera toggle when the identity has visual awareness; a recorded session carries a
// "Recording" mark in the video's corner. Refusals are shown as the service worded them.
// Everything lives in an open shadow root with its own styles.
import type { SessionNotice, TalkRoom, TranscriptSegment } from '../../console/index.ts';
import { microphoneProblem } from './microphone.ts';
import { type EmbedSession, StartRefused, startSession } from './start.ts';
import { AVATAR_CSS } from './styles.ts';

/** The chunk's path relative to embed.js, with its content hash (build.ts defines it). */
declare const LIKENESS_CHUNK: string;

/**
 * Where this script came from: the service's base URL unless `service` says otherwise, and
 * where the chunk is. `currentScript` is set only while a classic script first runs.
 */
const SCRIPT_URL =
  (document.currentScript as HTMLScriptElement | null)?.src ||
  Array.from(document.querySelectorAll<HTMLScriptElement>('script[src*="embed.js"]')).pop()?.src ||
  location.href;
const DEFAULT_SERVICE = new URL('.', SCRIPT_URL).href.replace(/\/$/, '');

type CallModule = typeof import('./call.ts');
let callModule: Promise<CallModule> | undefined;
function loadCall(): Promise<CallModule> {
  callModule ??= import(new URL(LIKENESS_CHUNK, SCRIPT_URL).href).catch((error: unknown) => {
    callModule = undefined; // the next click tries again
    throw error;
  });
  return callModule;
}

type State = 'idle' | 'starting' | 'live' | 'ended' | 'refused';
const MAX_CAPTIONS = 3;

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<Record<string, string>> = {},
  text = '',
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) if (value !== undefined) node.setAttribute(name, value);
  node.textContent = text;
  return node;
}

/** The shadow DOM; the element wires its buttons. */
function renderUi(root: ShadowRoot) {
  try {
    // A constructed sheet passes a host page's strict style-src (a <style> might not).
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(AVATAR_CSS);
    root.adoptedStyleSheets = [sheet];
  } catch {
    root.append(el('style', {}, AVATAR_CSS));
  }
  const video = el('video', { playsinline: '', autoplay: '', 'aria-label': 'The avatar' });
  video.muted = true; // its voice plays from the audio element
  const audio = el('audio', { autoplay: '' });
  const captions = el('ol', { class: 'captions', 'aria-live': 'polite', 'aria-label': 'Captions' });
  const hear = el('button', { type: 'button', class: 'hear', hidden: '' }, 'Tap to hear the avatar');
  // The top-right corner: the top-left is a test session's "TEST" mark, burned into the video.
  const recording = el('p', { class: 'recording', role: 'status', hidden: '' });
  recording.append(el('span', { class: 'dot', 'aria-hidden': 'true' }), 'Recording');
  const stage = el('div', { class: 'stage', hidden: '' });
  stage.append(video, audio, captions, recording, hear);
  const status = el('p', { class: 'status', role: 'status' });
  const problem = el('p', { class: 'problem', role: 'alert', hidden: '' });
  const call = el(
    'button',
    { type: 'button', class: 'call', 'aria-label': 'Start a video call with the avatar' },
    'Call',
  );
  const mute = el('button', { type: 'button', class: 'mute', 'aria-pressed': 'false', hidden: '' }, 'Mute');
  const camera = el('button', { type: 'button', class: 'camera', 'aria-pressed': 'false', hidden: '' }, 'Camera');
  const end = el('button', { type: 'button', class: 'end', 'aria-label': 'End the call', hidden: '' }, 'End');
  mute.setAttribute('aria-label', 'Mute the microphone');
  camera.setAttribute('aria-label', 'Turn the camera on');
  const controls = el('div', { class: 'controls' });
  controls.append(call, mute, camera, end);
  const container = el('div', { class: 'root', 'data-state': 'idle', part: 'root' });
  container.append(stage, problem, status, controls);
  root.append(container);

  return { container, stage, video, audio, captions, recording, hear, status, problem, call, mute, camera, end };
}

type Ui = ReturnType<typeof renderUi>;

class LikenessAvatar extends HTMLElement {
  #ui: Ui | undefined;
  #room: TalkRoom | null = null;
  #session: EmbedSession | null = null;
  #muted = false;
  #camera = false;
  #retryTimer: ReturnType<typeof setInterval> | undefined;

  connectedCallback(): void {
    if (this.#ui) return;
    const ui = renderUi(this.attachShadow({ mode: 'open' }));
    this.#ui = ui;
    // Pointing at the button fetches the chunk before the click.
    for (const warm of ['pointerenter', 'focus']) ui.call.addEventListener(warm, () => void loadCall().catch(() => {}));
    ui.call.addEventListener('click', () => void this.#start());
    ui.end.addEventListener('click', () => void this.#room?.leave());
    ui.hear.addEventListener('click', () => void this.#room?.startAudio());
    ui.mute.addEventListener('click', () => void this.#toggleMute());
    ui.camera.addEventListener('click', () => void this.#toggleCamera());
    if (this.framed && window.top === window) {
      ui.call.hidden = true;
      this.#problem(
        'This page shows a Likeness avatar inside an <iframe> on a site its key allows; opened on its own it does nothing.',
      );
    }
  }

  /** The element left the page: so does the visitor, which ends the session. */
  disconnectedCallback(): void {
    void this.#room?.leave();
  }

  /** The iframe form (GET /embed/frame) sets `frame`: it fills the frame and names its embedder. */
  get framed(): boolean {
    return this.hasAttribute('frame');
  }

  #setState(state: State): void {
    const ui = this.#ui!;
    ui.container.dataset.state = state;
    const inCall = state === 'live' || (state === 'starting' && this.#room !== null);
    ui.stage.hidden = !inCall;
    ui.call.hidden = inCall;
    ui.call.disabled = state === 'starting' || this.#retryTimer !== undefined;
    ui.call.textContent = state === 'ended' ? 'Call again' : 'Call';
    ui.mute.hidden = ui.end.hidden = !inCall;
    ui.camera.hidden = !inCall || !this.#session?.visual_awareness;
    this.dispatchEvent(
      new CustomEvent('likeness-call', {
        detail: { state, session_id: this.#session?.session_id ?? null },
        bubbles: true,
        composed: true,
      }),
    );
  }

  #problem(message: string | null): void {
    const { problem } = this.#ui!;
    problem.textContent = message ?? '';
    problem.hidden = !message;
  }

  #status(message: string): void {
    this.#ui!.status.textContent = message;
  }

  /** The service's words as they are; with a Retry-After, the button waits that long, counting down. */
  #refuse(message: string, retryAfterSeconds: number | null = null): void {
    this.#problem(message);
    this.#status('');
    clearInterval(this.#retryTimer);
    this.#retryTimer = undefined;
    if (retryAfterSeconds) {
      const until = Date.now() + retryAfterSeconds * 1000;
      const tick = () => {
        const left = Math.ceil((until - Date.now()) / 1000);
        if (left > 0) return this.#status(`You can call again in ${left} s.`);
        clearInterval(this.#retryTimer);
        this.#retryTimer = undefined;
        this.#status('');
        this.#ui!.call.disabled = false;
      };
      this.#retryTimer = setInterval(tick, 1000);
      tick();
    }
    this.#setState('refused');
  }

  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: a call's start in the order it happens, each refusal at the step that fails
  async #start(): Promise<void> {
    const ui = this.#ui!;
    if (this.#room || ui.call.disabled) return;
    // React keeps `key` to itself, so React pages name it `publishable-key`.
    const publishableKey = this.getAttribute('publishable-key') || this.getAttribute('key');
    const identityId = this.getAttribute('identity');
    if (!publishableKey || !identityId) {
      this.#refuse('This avatar has no publishable-key or identity attribute, so it cannot start.');
      return;
    }
    let embedder: string | null = null;
    if (this.framed) {
      embedder = location.ancestorOrigins?.[0] ?? (document.referrer ? new URL(document.referrer).origin : null);
      if (!embedder) {
        this.#refuse('This frame cannot tell which site shows it, so it cannot start.');
        return;
      }
    }
    this.#problem(null);
    ui.captions.replaceChildren();
    this.#showRecording(false);
    this.#setState('starting');
    this.#status('Starting…');
    const chunk = loadCall();
    chunk.catch(() => {}); // awaited below, after the start
    const microphone = await microphoneProblem(this.framed);
    if (microphone) return this.#refuse(microphone);
    try {
      this.#session = await startSession({
        service: (this.getAttribute('service') || DEFAULT_SERVICE).replace(/\/+$/, ''),
        publishableKey,
        identityId,
        formFactor: this.getAttribute('form-factor'),
        language: this.getAttribute('language'),
        // From the page's backend (POST /v1/visitor-tokens): who the visitor is, for their memory.
        visitorToken: this.getAttribute('visitor-token'),
        embedder,
      });
    } catch (error) {
      if (error instanceof StartRefused) return this.#refuse(error.message, error.retryAfterSeconds);
      throw error;
    }
    // The start's answer says it first; the room's metadata decides once joined.
    this.#showRecording(this.#session.record === true);
    let TalkRoomClass: CallModule['TalkRoom'];
    try {
      TalkRoomClass = (await chunk).TalkRoom;
    } catch {
      return this.#refuse('The avatar’s player could not be loaded. Check the connection and try again.');
    }
    const room = new TalkRoomClass(ui.video, ui.audio, {
      connectionState: (state) => {
        if (state === 'connected') {
          this.#status('');
          this.#setState('live');
        } else if (state === 'reconnecting') this.#status('Reconnecting…');
      },
      transcript: (segment) => this.#caption(segment),
      notice: (notice) => this.#notice(notice),
      audioBlocked: (blocked) => {
        ui.hear.hidden = !blocked;
      },
      avatarVideo: (present) => {
        ui.container.dataset.video = String(present);
      },
      agentState: (state) => {
        ui.container.dataset.agentState = state;
      },
      recording: (recorded) => this.#showRecording(recorded),
      disconnected: () => this.#ended(),
    });
    this.#room = room;
    this.#setState('starting');
    this.#status('Connecting…');
    try {
      const joined = await room.join(this.#session.rtc_url, this.#session.token);
      if (joined.microphoneProblem) this.#problem(joined.microphoneProblem);
    } catch {
      this.#room = null;
      this.#showRecording(false);
      await room.leave().catch(() => {});
      this.#refuse('The call could not connect. Try again in a moment.');
    }
  }

  #ended(): void {
    if (!this.#room) return;
    this.#room = null;
    this.#showRecording(false);
    this.#muted = this.#camera = false;
    this.#syncToggles();
    this.#status('The call ended.');
    this.#setState('ended');
  }

  #showRecording(recorded: boolean): void {
    this.#ui!.recording.hidden = !recorded;
  }

  #notice(notice: SessionNotice): void {
    if (notice.type === 'insufficient_credits') this.#problem('The call is ending: this avatar has no minutes left.');
    else if (notice.type === 'agent_unavailable') this.#problem('No avatar is free right now. Try again in a minute.');
  }

  /** The latest few lines, each replaced as its segment grows. */
  #caption(segment: TranscriptSegment): void {
    const { captions } = this.#ui!;
    if (!segment.text.trim()) return;
    let line = captions.querySelector<HTMLLIElement>(`li[data-id="${CSS.escape(segment.id)}"]`);
    if (!line) {
      line = el('li', { 'data-id': segment.id, class: segment.fromVisitor ? 'visitor' : 'agent' });
      captions.append(line);
      while (captions.children.length > MAX_CAPTIONS) captions.firstElementChild!.remove();
    }
    line.replaceChildren(el('span', { class: 'who' }, segment.fromVisitor ? 'You: ' : 'Avatar: '), segment.text);
    line.dataset.final = String(segment.final);
  }

  async #toggleMute(): Promise<void> {
    if (!this.#room) return;
    const problem = await this.#room.setMicrophone(this.#muted);
    if (problem) return this.#problem(problem);
    this.#muted = !this.#muted;
    this.#syncToggles();
  }

  async #toggleCamera(): Promise<void> {
    if (!this.#room) return;
    const problem = await this.#room.setCamera(!this.#camera);
    if (problem) return this.#problem(problem);
    this.#camera = !this.#camera;
    this.#syncToggles();
  }

  #syncToggles(): void {
    const { mute, camera } = this.#ui!;
    mute.setAttribute('aria-pressed', String(this.#muted));
    mute.textContent = this.#muted ? 'Unmute' : 'Mute';
    mute.setAttribute('aria-label', this.#muted ? 'Unmute the microphone' : 'Mute the microphone');
    camera.setAttribute('aria-pressed', String(this.#camera));
    camera.setAttribute('aria-label', this.#camera ? 'Turn the camera off' : 'Turn the camera on');
  }
}

if (!customElements.get('likeness-avatar')) customElements.define('likeness-avatar', LikenessAvatar);
