// A session's outcome on the Sessions page (docs/api.md#outcomes): each field of its schema with
// the value the conversation gave, or a dash; while it is written, or why there is none.
import { h } from '../dom.ts';
import type { Session } from '../resources.ts';

const shown = (value: unknown) =>
  value === null || value === undefined ? '—' : typeof value === 'string' ? value : JSON.stringify(value);

/** Null when the session asked for no outcome. */
export function outcomeBlock(session: Session): HTMLElement | null {
  if (!session.outcome_schema) return null;
  const heading = h('h3', null, 'Outcome');
  if (session.outcome_status === 'failed')
    return h(
      'section',
      { id: 'session-outcome' },
      heading,
      h('p', { class: 'muted' }, `None: ${session.outcome_detail}`),
    );
  if (!session.outcome)
    return h(
      'section',
      { id: 'session-outcome' },
      heading,
      h(
        'p',
        { class: 'muted' },
        session.outcome_status === 'pending' ? 'Being written…' : 'Written once the session ends with a visitor turn.',
      ),
    );
  const properties = (session.outcome_schema.properties ?? {}) as Record<string, { description?: string }>;
  return h(
    'section',
    { id: 'session-outcome' },
    heading,
    h(
      'dl',
      { class: 'outcome' },
      ...Object.keys(properties).flatMap((name) => [
        h('dt', { title: properties[name]?.description ?? '' }, name),
        h('dd', { 'data-field': name }, shown(session.outcome?.[name])),
      ]),
    ),
  );
}
