// Tables that turn into stacked cards on a phone: each cell carries its column name in
// data-label, which the narrow-screen CSS shows before the value.
import { h } from './dom.ts';
import { formatDate } from './format.ts';

type Content = Node | string | null | undefined | false;

export function dataTable(
  id: string,
  caption: string,
  headers: string[],
  rows: HTMLTableRowElement[],
): HTMLTableElement {
  return h(
    'table',
    { id, class: 'data-table' },
    h('caption', { class: 'visually-hidden' }, caption),
    h('thead', null, h('tr', null, ...headers.map((header) => h('th', { scope: 'col' }, header)))),
    h('tbody', null, ...rows),
  );
}

export function cell(label: string, ...content: Content[]): HTMLTableCellElement {
  return h('td', { 'data-label': label }, ...content);
}

/** A button of a row's actions, small; `look` is its kind (`danger` for what cannot be undone), `testId` names it for tests. */
export function rowButton(label: string, testId: string, look: 'secondary' | 'danger' | 'plain'): HTMLButtonElement {
  return h(
    'button',
    { type: 'button', class: look === 'plain' ? 'small' : `${look} small`, 'data-testid': testId },
    label,
  );
}

/** A key's last use and revocation, and its actions while it is not revoked: API keys and publishable keys alike. */
export function keyCells(
  key: { last_used_at: string | null; revoked_at: string | null },
  actions: HTMLButtonElement[],
): HTMLTableCellElement[] {
  return [
    cell('Last used', key.last_used_at ? formatDate(key.last_used_at) : 'Never'),
    cell(
      'Revoked',
      key.revoked_at ? h('span', { class: 'badge badge-danger' }, `Revoked ${formatDate(key.revoked_at)}`) : 'No',
    ),
    cell('Actions', key.revoked_at ? null : h('div', { class: 'actions' }, ...actions)),
  ];
}
