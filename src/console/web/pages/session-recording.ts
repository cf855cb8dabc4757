// A recorded session's Recording block on the Sessions page (docs/api.md#recordings): its
// status, and once ready in the service's store the MP4 played with the conversation's captions,
// a download link and a delete. A file in the account's own bucket shows its key instead.
import { api } from '../api.ts';
import { confirmAction } from '../confirm-dialog.ts';
import { h, replaceChildren } from '../dom.ts';
import { formatDate, formatDuration } from '../format.ts';
import { errorBox, messageOf, showError, whileBusy } from '../forms.ts';
import { newestAnswer } from '../newest-answer.ts';
import type { Recording } from '../resources.ts';

/** While it is recorded or joined, read again this often: it becomes ready on its own. */
const REFRESH_MS = 3000;

const STATUS_NAMES: Record<Recording['status'], string> = {
  recording: 'Recording',
  processing: 'Processing',
  ready: 'Ready',
  failed: 'Failed',
};

export interface RecordingBlock {
  element: HTMLElement;
  /** Stops its video and its refreshes (another session was chosen). */
  dispose(): void;
}

function formatSize(bytes: number | null): string {
  if (bytes === null) return '—';
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** The block of one session; it reads the recording itself. */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a page block built top to bottom as it shows, each handler beside the element it serves
export function recordingBlock(sessionId: string): RecordingBlock {
  const path = `/console/api/sessions/${encodeURIComponent(sessionId)}`;
  const element = h(
    'section',
    { id: 'session-recording', 'aria-labelledby': 'session-recording-title' },
    h('h3', { id: 'session-recording-title' }, 'Recording'),
    h('p', { class: 'muted' }, 'Loading…'),
  );
  const error = errorBox('session-recording-error');
  let video: HTMLVideoElement | null = null;
  let refresh: ReturnType<typeof setTimeout> | undefined;
  let disposed = false;

  const show = (...content: (Node | null)[]) =>
    replaceChildren(element, h('h3', { id: 'session-recording-title' }, 'Recording'), ...content, error);

  const status = (recording: Recording) => {
    const deleted = recording.deleted_at !== null;
    const name = deleted ? 'Deleted' : STATUS_NAMES[recording.status];
    return h(
      'p',
      { class: 'recording-status' },
      h(
        'span',
        {
          id: 'recording-status',
          class: `badge status-${deleted ? 'deleted' : recording.status}`,
          'data-status': deleted ? 'deleted' : recording.status,
        },
        name,
      ),
      ' ',
      recording.status === 'failed'
        ? (recording.reason ?? 'No file was made.')
        : deleted
          ? `The file was removed ${formatDate(recording.deleted_at)}.`
          : recording.status === 'recording'
            ? 'The session is being recorded, or its last parts are arriving.'
            : recording.status === 'processing'
              ? 'Its parts are being joined into one file.'
              : `${formatDuration(recording.duration_seconds ?? 0)} · ${formatSize(recording.size_bytes)}`,
    );
  };

  async function remove(button: HTMLButtonElement): Promise<void> {
    if (
      !(await confirmAction(
        'Delete this recording? The file is removed for good; the session and its transcript stay.',
        'Delete recording',
      ))
    )
      return;
    try {
      await whileBusy([button], 'Deleting…', () => api.delete(`${path}/recording`));
      await load();
    } catch (caught) {
      showError(error, caught);
    }
  }

  /** The player: the MP4 and the captions, both same-origin, so the sign-in cookie goes with each. */
  function player(recording: Recording, url: string): HTMLElement {
    video?.pause();
    video = h(
      'video',
      { id: 'recording-video', controls: true, preload: 'metadata', playsinline: true },
      h('source', { src: url, type: 'video/mp4' }),
      // A <track> fetch carries cookies but no header: the console's GETs need only the cookie.
      h('track', {
        kind: 'captions',
        src: `${path}/captions.vtt`,
        label: 'Conversation',
        default: true,
      }),
    );
    const remover = h('button', { type: 'button', id: 'delete-recording', class: 'danger small' }, 'Delete recording');
    remover.addEventListener('click', () => void remove(remover));
    return h(
      'div',
      { class: 'recording-player' },
      video,
      h(
        'div',
        { class: 'actions' },
        // `download` names the file where the link is same-origin; a store elsewhere (S3,
        // ASSETS_URL) has it ignored, and the new tab keeps the console open.
        h(
          'a',
          {
            id: 'download-recording',
            class: 'link-button',
            href: url,
            download: `${recording.session_id}.mp4`,
            target: '_blank',
            rel: 'noopener',
          },
          'Download',
        ),
        remover,
      ),
    );
  }

  function render(recording: Recording): void {
    if (recording.deleted_at === null && recording.status === 'ready' && recording.download_url) {
      show(status(recording), player(recording, recording.download_url));
      return;
    }
    video?.pause();
    video = null;
    show(
      status(recording),
      recording.object_key && recording.deleted_at === null
        ? h(
            'p',
            { class: 'recording-key' },
            'In your bucket at ',
            h('code', { id: 'recording-object-key' }, recording.object_key),
          )
        : null,
    );
  }

  const ask = newestAnswer();
  async function load(): Promise<void> {
    const newest = ask();
    clearTimeout(refresh);
    try {
      const recording = await api.get<Recording>(`${path}/recording`);
      if (!newest()) return;
      if (disposed) return;
      render(recording);
      if (recording.status === 'recording' || recording.status === 'processing')
        // Only while shown: leaving the page removes the block without a dispose.
        refresh = setTimeout(() => element.isConnected && void load(), REFRESH_MS);
    } catch (caught) {
      if (!disposed) show(h('p', { class: 'error', role: 'alert' }, messageOf(caught)));
    }
  }

  void load();
  return {
    element,
    dispose() {
      disposed = true;
      clearTimeout(refresh);
      video?.pause();
    },
  };
}
