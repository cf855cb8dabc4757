// Sessions: every conversation with its length and charges; choosing one shows what the
// visitor experienced (its metrics), its recording when it was recorded, its outcome, and its transcript.
import { api } from '../api.ts';
import { h, replaceChildren } from '../dom.ts';
import { formatCredits, formatDate, formatDuration } from '../format.ts';
import { errorBox, showError } from '../forms.ts';
import type { EndReason, IdentityListItem, Session, Transcript } from '../resources.ts';
import { cell, dataTable, rowButton } from '../table.ts';
import { type Page, pageHeading } from './page.ts';
import { outcomeBlock } from './session-outcome.ts';
import { type RecordingBlock, recordingBlock } from './session-recording.ts';

const ms = (value: number | null) =>
  value === null ? '—' : value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${Math.round(value)} ms`;

/** The session's quality as its API answer has it (docs/api.md#session-metrics), one row. */
function metricsTable(metrics: Session['metrics']): HTMLTableElement {
  const { voice_to_voice_ms: v2v, providers } = metrics;
  const names = [providers.stt, providers.llm, providers.tts];
  const row = h(
    'tr',
    null,
    cell('First frame', ms(metrics.first_frame_ms)),
    cell('Voice to voice (p50 / p95)', v2v.p50 === null ? '—' : `${ms(v2v.p50)} / ${ms(v2v.p95)}`),
    cell('Frames per second', metrics.fps === null ? '—' : metrics.fps.toFixed(1)),
    cell('Replies', String(metrics.turns)),
    cell('Interruptions', String(metrics.interruptions)),
    cell(
      'Speech · model · voice',
      names.every((name) => name === null) ? '—' : names.map((name) => name ?? '?').join(' · '),
    ),
  );
  return dataTable(
    'session-metrics',
    'What the visitor experienced in this session',
    [
      'First frame',
      'Voice to voice (p50 / p95)',
      'Frames per second',
      'Replies',
      'Interruptions',
      'Speech · model · voice',
    ],
    [row],
  );
}

const END_REASON_NAMES: Record<EndReason, string> = {
  ended_by_api: 'Ended on request',
  agent_ended: 'The agent ended it',
  client_left: 'Visitor left',
  no_join: 'Nobody joined',
  max_duration: 'Time limit reached',
  insufficient_credits: 'Credits ran out',
  room_closed: 'Room closed',
  agent_unavailable: 'Agent unavailable',
  service_restarting: 'Service restarting',
  idle: 'Visitor went quiet',
};

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a page built top to bottom as it shows, each handler beside the element it serves
export const sessionsPage: Page = async (context) => {
  const error = errorBox('sessions-error');
  const list = h('div', { id: 'sessions-list' }, h('p', { class: 'muted' }, 'Loading…'));
  const transcript = h('section', { id: 'session-transcript', class: 'card', 'aria-live': 'polite', hidden: true });
  // The billing rule in a sentence (docs/api.md#credits), where the charges are read.
  const rule = h(
    'p',
    { id: 'billing-rule', class: 'muted' },
    'You pay for the minutes your visitor saw the avatar: the first one starts when they first see it, each next one a minute later if they are still there. Time with nobody watching, and time the avatar was lost, is free.',
  );
  context.root.append(pageHeading('Sessions'), rule, error, list, transcript);

  let sessions: Session[];
  let identityNames: Map<string, string>;
  try {
    const [sessionList, identities] = await Promise.all([
      api.get<Session[]>('/console/api/sessions'),
      api.get<IdentityListItem[]>('/console/api/identities').catch(() => [] as IdentityListItem[]),
    ]);
    sessions = sessionList;
    identityNames = new Map(identities.map((identity) => [identity.identity_id, identity.name]));
  } catch (caught) {
    list.remove();
    showError(error, caught);
    return;
  }
  const nameOf = (session: Session) =>
    session.identity_id ? (identityNames.get(session.identity_id) ?? 'Deleted identity') : 'No identity';

  let recording: RecordingBlock | null = null;

  async function showTranscript(session: Session, row: HTMLTableRowElement): Promise<void> {
    list.querySelectorAll('tr[aria-current]').forEach((selected) => selected.removeAttribute('aria-current'));
    row.setAttribute('aria-current', 'true');
    transcript.hidden = false;
    const title = h('h2', { tabindex: -1 }, `Transcript — ${nameOf(session)}, ${formatDate(session.created_at)}`);
    let quality = metricsTable(session.metrics);
    // The previous session's block stops its video and stops reading its recording.
    recording?.dispose();
    recording = session.record ? recordingBlock(session.session_id) : null;
    const recorded = recording?.element ?? null;
    replaceChildren(transcript, title, quality, recorded, h('p', { class: 'muted' }, 'Loading…'));
    try {
      const path = `/console/api/sessions/${encodeURIComponent(session.session_id)}`;
      // Read again: a running session's metrics grow with each turn.
      const [fresh, { turns }] = await Promise.all([api.get<Session>(path), api.get<Transcript>(`${path}/transcript`)]);
      quality = metricsTable(fresh.metrics);
      const identityName = nameOf(session);
      replaceChildren(
        transcript,
        title,
        quality,
        recorded,
        outcomeBlock(fresh),
        turns.length
          ? h(
              'ol',
              { id: 'session-transcript-turns', class: 'transcript' },
              ...turns.map((turn) => {
                const fromVisitor = turn.role === 'user';
                return h(
                  'li',
                  { class: fromVisitor ? 'turn turn-visitor' : 'turn turn-agent' },
                  h('span', { class: 'speaker' }, fromVisitor ? 'You' : identityName),
                  h(
                    'span',
                    { class: 'text' },
                    turn.text,
                    turn.interrupted ? h('em', { class: 'muted' }, ' (interrupted)') : null,
                  ),
                );
              }),
            )
          : h('p', { class: 'muted' }, 'Nothing was said in this session.'),
      );
    } catch (caught) {
      replaceChildren(
        transcript,
        title,
        quality,
        recorded,
        h('p', { class: 'error', role: 'alert' }, caught instanceof Error ? caught.message : String(caught)),
      );
    }
    title.focus();
  }

  const rows = sessions.map((session) => {
    const view = rowButton('Transcript', 'view-transcript', 'secondary');
    const row = h(
      'tr',
      { class: 'clickable', 'data-session-id': session.session_id },
      cell('Started', formatDate(session.created_at)),
      cell('Identity', nameOf(session)),
      cell('Duration', session.ended_at ? formatDuration(session.duration_seconds) : 'Running'),
      cell('End reason', session.end_reason ? (END_REASON_NAMES[session.end_reason] ?? session.end_reason) : '—'),
      cell('Watched', formatDuration(session.visitor_seconds)),
      cell('Charged', `${session.billed_minutes} min · ${formatCredits(session.credits_charged)}`),
      cell(
        'Status',
        h('span', { class: `badge status-${session.status}` }, session.status === 'running' ? 'Running' : 'Ended'),
      ),
      cell('Transcript', view),
    );
    // The whole row answers a click; the button is the keyboard's way in.
    row.addEventListener('click', () => void showTranscript(session, row));
    return row;
  });
  replaceChildren(
    list,
    rows.length
      ? dataTable(
          'sessions-table',
          'Your sessions, newest first; choose one to read its transcript',
          ['Started', 'Identity', 'Duration', 'End reason', 'Watched', 'Charged', 'Status', 'Transcript'],
          rows,
        )
      : h('p', { class: 'muted' }, 'No sessions yet. Start one from the Talk page.'),
  );
};
